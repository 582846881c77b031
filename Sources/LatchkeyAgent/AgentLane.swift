import Dispatch
import Latchkey
import Synchronization

/// One namespace's lane in the agent: its commands run one at a time, in the order they
/// came, at most ``AgentServer/Limits/maximumQueued`` of them waiting or running; after
/// one missed the Secret Service deadline, the ones behind it fail fast for a while (its
/// silence window).
final class AgentLane: Sendable {
    private let queue = DispatchQueue(label: "latchkey.agent.namespace")
    /// How many commands wait for it or run in it.
    private let waiting = Mutex(0)
    /// After a command of this namespace missed the Secret Service deadline: until when
    /// the commands queued behind it fail fast, and with what (the miss's own error).
    private let silence = Mutex<(until: ContinuousClock.Instant, failure: LatchkeyError)?>(nil)

    /// How many commands wait for it or run in it.
    var count: Int { waiting.withLock { $0 } }

    /// Runs `body` when every command that came before it ended, unless `limit` commands
    /// already wait or run.
    /// - Returns: What `body` returned; nil when the lane was full (`body` did not run).
    func run<T>(within limit: Int, _ body: () throws -> T) rethrows -> T? {
        let admitted = waiting.withLock { waiting -> Bool in
            guard waiting < limit else { return false }
            waiting += 1
            return true
        }
        guard admitted else { return nil }
        return try queue.sync {
            defer { waiting.withLock { $0 -= 1 } }
            return try body()
        }
    }

    /// The error a command that starts at `now` fails fast with: the missed deadline's,
    /// within the silence window after it; nil otherwise (the window, once over, is closed).
    func silentFailure(at now: ContinuousClock.Instant) -> LatchkeyError? {
        silence.withLock { silence in
            guard let window = silence, now < window.until else {
                silence = nil
                return nil
            }
            return window.failure
        }
    }

    /// Opens the silence window after a command missed the Secret Service deadline: until
    /// `until`, the commands behind it fail fast with `failure`.
    func silence(until: ContinuousClock.Instant, failingWith failure: LatchkeyError) {
        silence.withLock { $0 = (until, failure) }
    }
}
