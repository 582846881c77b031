import Latchkey
import LatchkeyLoginFlow
import Synchronization

/// An authenticator that answers with scripted results, optionally holding
/// each answer until the test releases it (or the attempt is cancelled).
final class ScriptedAuthenticator: Authenticator {
    private struct Script {
        var results: [AuthenticationResult]
        var attempts: [(username: String, password: SecretBytes)] = []
        var cancelled = 0
    }

    private let script: Mutex<Script>
    private let holds: Bool
    private let gate: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation

    init(_ results: [AuthenticationResult], holds: Bool = false) {
        script = Mutex(Script(results: results))
        self.holds = holds
        (gate, opener) = AsyncStream.makeStream(of: Void.self)
    }

    /// Lets one held attempt answer.
    func release() { opener.yield() }

    var attempts: [(username: String, password: SecretBytes)] { script.withLock { $0.attempts } }
    var cancelled: Int { script.withLock { $0.cancelled } }

    func authenticate(username: String, password: SecretBytes) async -> AuthenticationResult {
        script.withLock { $0.attempts.append((username, password)) }
        if holds {
            var waiting = gate.makeAsyncIterator()
            if await waiting.next() == nil || Task.isCancelled {
                script.withLock { $0.cancelled += 1 }
                return .failure(.cancelled)
            }
        }
        return script.withLock { $0.results.isEmpty ? .failure(.serverError) : $0.results.removeFirst() }
    }
}
