import Dispatch
import Latchkey
import Synchronization

/// One namespace's lane in the agent: its commands run one at a time, in the order they
/// came, at most ``AgentServer/Limits/maximumQueued`` of them waiting or running. (Its
/// silence window, after a command missed the Secret Service deadline, is kept with its
/// vault, in the ``VaultPool``.)
final class AgentLane: Sendable {
    private let queue = DispatchQueue(label: "latchkey.agent.namespace")
    /// How many commands wait for it or run in it.
    private let waiting = Mutex(0)

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
}
