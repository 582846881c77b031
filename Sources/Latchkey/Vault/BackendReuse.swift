import Synchronization

/// The Secret Service backends a long-lived process (the agent) keeps from one
/// vault opening to the next, so what they learnt survives: the namespace's key
/// items and where each item read was found. Off unless ``enable()`` is called: a
/// command-line process opens each store once.
///
/// Reuse changes nothing another process could notice: each command starts by
/// checking the service again, whatever an earlier command met, and its first
/// Secret Service call is the one a new process makes first, the search for the
/// namespace's key items, so a hung or locked service fails a command at the same
/// call, and writes the same audit entries, as in a new process. Only the second
/// call is saved: when the search finds exactly the unlocked key items read before,
/// their kept values are used instead of reading their secrets again; anything
/// else found (an item added, gone or locked, or nothing, as a locked gnome-keyring
/// answers) reads them again, with a new process's errors. The backend
/// looks its pseudonym key up on every write and again after a search that finds
/// nothing, and an audit trail whose kept key no longer verifies its anchor reads
/// the key afresh before it reports anything (``AuditTrail``). The encrypted file is
/// never kept: each command decrypts and authenticates the whole vault, so an
/// edit of the file in place is caught on the next command, as in-process.
package final class BackendReuse: Sendable {
    /// The process's stores.
    package static let shared = BackendReuse()

    private struct Kept {
        var enabled = false
        var secretService: [String: SecretServiceBackend] = [:]
    }

    private let kept = Mutex(Kept())

    /// Starts keeping stores.
    package func enable() {
        kept.withLock { $0.enabled = true }
    }

    /// Whether stores are kept.
    package var isEnabled: Bool { kept.withLock { $0.enabled } }

    /// The Secret Service backend of `appID`: the kept one, or `make()`'s (kept when enabled).
    func secretService(_ appID: AppID, deadline: Duration, _ make: () -> SecretServiceBackend) -> SecretServiceBackend {
        let address = "\(appID.rawValue)\u{0}\(deadline)"
        if let backend = kept.withLock({ $0.enabled ? $0.secretService[address] : nil }) {
            backend.beginCommand()
            return backend
        }
        let backend = make()
        kept.withLock { if $0.enabled { $0.secretService[address] = backend } }
        return backend
    }
}
