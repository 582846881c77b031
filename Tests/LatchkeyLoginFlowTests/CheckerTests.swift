import Testing

@testable import LatchkeyLoginFlow

@Suite("Exhaustive checker", .sandboxed)
struct CheckerTests {
    @Test("every event sequence up to depth 8 keeps every invariant")
    func exhaustive() {
        let clock = ContinuousClock()
        var report = ExhaustiveChecker.Report()
        let elapsed = clock.measure {
            report = ExhaustiveChecker(reduce: Login.reduce).run()
        }
        let alphabet = Letter.all.count
        print(
            "LoginFlow checker (deduplicated, depth 8, \(alphabet) letters): \(report.sequences) sequences covered, "
                + "\(report.transitions) transitions run, \(report.states) distinct states, \(elapsed)")
        #expect(report.violation == nil, "\(report.violation?.description ?? "")")
        #expect(report.states > 1_000, "the search reached only \(report.states) distinct states")
    }

    @Test("every sequence up to depth 4, run literally without deduplication, keeps every invariant")
    func literal() {
        let clock = ContinuousClock()
        var report = ExhaustiveChecker.Report()
        let elapsed = clock.measure {
            report = ExhaustiveChecker(reduce: Login.reduce, depth: 4).runWithoutDeduplication()
        }
        print("LoginFlow checker (literal, depth 4): \(report.sequences) sequences run, \(elapsed)")
        #expect(report.violation == nil, "\(report.violation?.description ?? "")")
        #expect(report.sequences >= 1_000_000)
    }

    @Test("the checker catches a broken reducer", arguments: BrokenReducers.all.map(\.name))
    func catchesBrokenReducer(name: String) throws {
        let broken = try #require(BrokenReducers.all.first { $0.name == name })
        let report = ExhaustiveChecker(reduce: broken.reduce).run()
        let violation = try #require(report.violation, "not caught: \(name)")
        print("caught \"\(name)\": \(violation)")
        #expect(violation.problems.contains(broken.breaks), "caught for another reason: \(violation)")
    }
}
