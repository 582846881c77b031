import Synchronization

/// The audit appends of an open vault whose `fsync` and anchor move wait for
/// ``Vault/settleAudit()-6yyh3``, while its ``Vault/auditDurability`` is
/// ``Vault/AuditDurability/deferred``: a server answering requests settles them once
/// the answer is sent, so that its client does not wait for the disk twice (about
/// 0.75 ms of every command on the `swift` machine, BENCHMARKS.md).
///
/// Each entry is written into the trail (`write`) before the append returns, so every
/// reader, and a process killed before it settles, sees it; only its durability
/// against a power loss comes later. Until then the trail is one entry past its anchor,
/// the state a crash between an append's two steps leaves and every reader accepts;
/// the next append to the trail, in any process, anchors that entry before it writes
/// its own. Every vault has one, deferring nothing until it is told to.
final class AuditSyncDeferral: Sendable {
    /// Whether appends defer, and the last deferred append of each trail (an earlier one
    /// of the same trail was anchored when the later one was made).
    private let state = Mutex<(isDeferring: Bool, pending: [AuditTrail.DeferredAppend])>((false, []))

    /// A deferral that defers nothing until ``isDeferring`` is set.
    init() {}

    /// Whether appends leave their `fsync` and anchor move to ``settle()``.
    var isDeferring: Bool {
        get { state.withLock { $0.isDeferring } }
        set { state.withLock { $0.isDeferring = newValue } }
    }

    /// Notes an entry written and not yet made durable.
    func add(_ append: AuditTrail.DeferredAppend) {
        state.withLock { state in
            state.pending.removeAll { $0.trail === append.trail }
            state.pending.append(append)
        }
    }

    /// Makes every deferred entry durable and moves each trail's anchor to it, under
    /// the trail's lock.
    /// - Returns: What failed, by trail (the entries are written, and the next append
    ///   to a trail anchors them).
    func settle() -> [AuditSyncFailure] {
        let appends = state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
        return appends.compactMap { append in
            do {
                try append.trail.settle(append)
                return nil
            } catch let error as LatchkeyError {
                return AuditSyncFailure(path: append.trail.path, error: error)
            } catch {
                return AuditSyncFailure(path: append.trail.path, error: LatchkeyError(.io, "\(error)"))
            }
        }
    }
}

extension AuditTrail {
    /// What an append left to a ``deferral``: the entry to anchor and what the trail was
    /// when it was written.
    struct DeferredAppend {
        let trail: AuditTrail
        /// The trail file the entry was written to, kept open until it is settled.
        let file: POSIX.File
        let key: SecretBytes
        /// The entry, as the anchor will name it.
        let entry: AuditAnchor
        /// The anchor file's write counter when the entry was written (it names the entry before).
        let anchorCounter: UInt64?
        /// The file's size once the entry was written.
        let size: Int
    }

    /// Makes the entry an append left to the ``deferral`` durable and moves the anchor
    /// to it, under the lock, when nothing touched the trail since: the same file, of the
    /// size the append left, and the anchor file at the write the append saw. Otherwise
    /// there is nothing to do: another append anchored the entry first (every append
    /// anchors an entry left past the anchor before its own), a trim or reset rewrote the
    /// file, or the namespace was removed. It creates nothing (no directory, lock, trail
    /// or anchor file), so a store deleted once the command answered stays deleted.
    /// - Parameter append: What the append left.
    /// - Throws: File errors.
    func settle(_ append: DeferredAppend) throws {
        do {
            try PrivateFiles.withExclusiveLockIfExists(lockPath) {
                let written = try append.file.status()
                guard let current = try POSIX.status(of: path), current.device == written.device,
                    current.inode == written.inode, written.size == append.size,
                    case .anchor(_, let counter) = try anchorFile.read(key: append.key),
                    counter == append.anchorCounter
                else { return }
                try append.file.sync()
                try anchorFile.write(append.entry, after: counter, key: append.key)
            }
        } catch let error as LatchkeyError where error.code == .notFound {
            // The namespace went while this settled (its anchor file, say): nothing is left to anchor.
        }
    }
}
