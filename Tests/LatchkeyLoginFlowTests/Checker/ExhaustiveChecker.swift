import Latchkey

@testable import LatchkeyLoginFlow

/// Explores every event sequence over ``Letter/all`` up to a depth and checks
/// ``Invariants`` after every step.
///
/// Breadth-first with a visited set keyed by the exact ``Snapshot``: the reducer
/// is deterministic and every invariant is a property of one step, so checking
/// every transition out of every state reachable in fewer than `depth` steps
/// checks every step of every sequence up to `depth`. The number of sequences
/// covered is counted over the transition graph (it must equal the sum of
/// alphabet^k), the number of transitions executed is what actually ran.
struct ExhaustiveChecker {
    typealias Reducer = @Sendable (Login.State, Login.Event) -> (Login.State, [Login.Effect])

    struct Violation: CustomStringConvertible {
        let path: [Letter]
        let problems: [String]
        var description: String {
            "after [\(path.map(\.description).joined(separator: ", "))]: \(problems.joined(separator: "; "))"
        }
    }

    struct Report {
        var sequences = 0
        var transitions = 0
        var states = 0
        var violation: Violation?
    }

    let reduce: Reducer
    var depth = 8
    var alphabet = Letter.all
    var initial = Login.State(configuration: Fixtures.configuration)

    /// Runs the breadth-first exploration, stopping at the first violation.
    func run() -> Report {
        var report = Report()
        var states = [initial]
        var parents: [(state: Int, letter: Letter)?] = [nil]
        var index = [Snapshot(initial): 0]
        var successors: [[Int32]] = []
        var frontier = [0]
        for _ in 0..<depth {
            var next: [Int] = []
            for source in frontier {
                let pre = states[source]
                var targets: [Int32] = []
                targets.reserveCapacity(alphabet.count)
                for letter in alphabet {
                    let event = letter.event(for: pre)
                    let (post, effects) = reduce(pre, event)
                    report.transitions += 1
                    let problems = Invariants.violations(
                        of: Step(pre: pre, letter: letter, event: event, post: post, effects: effects))
                    if !problems.isEmpty {
                        report.states = states.count
                        report.violation = Violation(path: path(to: source, parents) + [letter], problems: problems)
                        return report
                    }
                    let key = Snapshot(post)
                    if let known = index[key] {
                        targets.append(Int32(known))
                    } else {
                        index[key] = states.count
                        targets.append(Int32(states.count))
                        next.append(states.count)
                        states.append(post)
                        parents.append((source, letter))
                    }
                }
                if successors.count <= source {
                    successors.append(contentsOf: repeatElement([], count: source + 1 - successors.count))
                }
                successors[source] = targets
            }
            frontier = next
        }
        report.states = states.count
        report.sequences = countSequences(successors, stateCount: states.count)
        return report
    }

    /// Explores every sequence up to `depth` literally, without deduplication.
    /// - Returns: The number of sequences run (one per non-empty prefix) and the first violation.
    func runWithoutDeduplication() -> Report {
        var report = Report()
        var path: [Letter] = []
        func explore(_ pre: Login.State) -> Bool {
            guard path.count < depth else { return true }
            for letter in alphabet {
                let event = letter.event(for: pre)
                let (post, effects) = reduce(pre, event)
                report.sequences += 1
                report.transitions += 1
                path.append(letter)
                let problems = Invariants.violations(
                    of: Step(pre: pre, letter: letter, event: event, post: post, effects: effects))
                if !problems.isEmpty {
                    report.violation = Violation(path: path, problems: problems)
                    return false
                }
                guard explore(post) else { return false }
                path.removeLast()
            }
            return true
        }
        _ = explore(initial)
        return report
    }

    /// The number of event sequences of length 1...depth from the initial state.
    private func countSequences(_ successors: [[Int32]], stateCount: Int) -> Int {
        var counts = [Int](repeating: 0, count: stateCount)
        counts[0] = 1
        var total = 0
        for _ in 0..<depth {
            var next = [Int](repeating: 0, count: stateCount)
            for (state, count) in counts.enumerated() where count > 0 {
                for target in successors[state] {
                    next[Int(target)] += count
                }
            }
            total += next.reduce(0, +)
            counts = next
        }
        return total
    }

    private func path(to state: Int, _ parents: [(state: Int, letter: Letter)?]) -> [Letter] {
        var letters: [Letter] = []
        var current = state
        while let parent = parents[current] {
            letters.append(parent.letter)
            current = parent.state
        }
        return letters.reversed()
    }
}
