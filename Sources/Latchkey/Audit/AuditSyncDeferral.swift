import Synchronization

/// The audit appends of one command whose `fsync` and anchor move wait until its
/// answer is sent: the agent's, so that a client does not wait for the disk twice
/// (about 0.75 ms of every command on the `swift` machine, BENCHMARKS.md).
///
/// Each entry is written into the trail (`write`) before the append returns, so every
/// reader, and a process killed before ``settle()``, sees it; only its durability
/// against a power loss comes after the answer. Until then the trail is one entry
/// past its anchor, the state a crash between an append's two steps leaves and
/// every reader accepts; the next append to the trail, in any process, anchors that
/// entry before it writes its own. A vault opened for a command the agent runs gets
/// one (`Vault.open(appID:policy:storeDirectory:backend:passphrase:unlock:deferringAuditSyncTo:)`);
/// the library's own vaults never defer.
package final class AuditSyncDeferral: Sendable {
    /// The last deferred append of each trail (an earlier one of the same trail was
    /// anchored when the later one was made).
    private let pending = Mutex<[AuditTrail.DeferredAppend]>([])

    /// A deferral with nothing left to settle.
    package init() {}

    /// Notes an entry written and not yet made durable.
    func add(_ append: AuditTrail.DeferredAppend) {
        pending.withLock { pending in
            pending.removeAll { $0.trail === append.trail }
            pending.append(append)
        }
    }

    /// Makes every deferred entry durable and moves each trail's anchor to it, under
    /// the trail's lock; call it once the command's answer is sent.
    /// - Returns: What failed, by trail, for the agent's log (the entries are written,
    ///   and the next append to a trail anchors them).
    package func settle() -> [(path: String, error: LatchkeyError)] {
        let appends = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        return appends.compactMap { append in
            do {
                try append.trail.settle(append)
                return nil
            } catch let error as LatchkeyError {
                return (append.trail.path, error)
            } catch {
                return (append.trail.path, LatchkeyError(.io, "\(error)"))
            }
        }
    }
}
