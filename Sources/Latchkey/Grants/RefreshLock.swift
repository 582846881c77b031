import Dispatch

/// The two locks of a namespace's grants, each an exclusive `flock` on a file in the
/// namespace's directory, taken by every thread, process and agent alike (each takes
/// it on its own open file, so threads of one process exclude each other too). The
/// kernel releases a lock when its holder closes the file or dies, so a killed holder
/// never leaves it held.
///
/// - ``Kind/refresh`` (`refresh.lock`) lets one caller at a time refresh or replace
///   the grants; it is held while the app's refresher runs.
/// - ``Kind/commit`` (`commit.lock`) is held for the short step that settles a
///   refresh (reading the session again, then saving or ending it) and by every
///   deletion of sessions (logout, session deletion, wipe, the exit policy). No app
///   code runs under it, so a deletion waits at most for one settle's store calls,
///   never for a refresher, and nothing under it takes it again.
///
/// Always taken in that order (refresh, then commit, then the audit trail's lock).
enum RefreshLock {
    /// Which lock of the namespace.
    enum Kind: Sendable {
        /// Held for a whole refresh, or for saving a grant.
        case refresh
        /// Held while a refresh settles, and while sessions are deleted.
        case commit

        /// The lock file's name in the namespace's directory.
        var fileName: String {
            switch self {
            case .refresh: "refresh.lock"
            case .commit: "commit.lock"
            }
        }

        /// What the holder was doing, as the waiter's error says.
        fileprivate var holding: String {
            switch self {
            case .refresh: "kept refreshing this session"
            case .commit: "kept saving or deleting this namespace's sessions"
            }
        }
    }

    /// Runs `body` holding lock `kind` of `directory`'s namespace, waiting at most `deadline` for it.
    /// - Parameters:
    ///   - kind: Which lock.
    ///   - directory: The namespace's directory (created when missing).
    ///   - deadline: How long to wait for another holder.
    ///   - body: What runs under the lock.
    /// - Returns: What `body` returns.
    /// - Throws: `LatchkeyError` `.timedOut` when the lock was not free within
    ///   `deadline`; file errors; what `body` throws.
    static func withLock<R>(
        _ kind: Kind, in directory: NamespaceDirectory, deadline: Duration, _ body: () throws -> R
    ) throws -> R {
        try directory.prepare()
        let path = directory.file(kind.fileName)
        let file = try POSIX.File.open(path, .readWriteCreate(permissions: 0o600))
        try PrivateFiles.requirePrivate(file.status(), path: path, directory: false)
        let giveUp = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, deadline / .nanoseconds(1)))
        var pause = Duration.milliseconds(1)
        while try !file.tryLockExclusively() {
            guard DispatchTime.now().uptimeNanoseconds < giveUp else { throw busy(kind, deadline) }
            POSIX.sleep(pause)
            pause = min(pause * 2, .milliseconds(20))
        }
        return try withExtendedLifetime(file) { try body() }
    }

    /// Runs `body` holding lock `kind` of a store kept in memory (no directory: the
    /// vaults on that store, which stand for processes sharing it, share its locks),
    /// waiting at most `deadline` for it.
    static func withLock<R>(
        _ kind: Kind, of locks: MemoryStoreLocks, deadline: Duration, _ body: () throws -> R
    ) throws -> R {
        let gate = locks.gate(kind)
        guard gate.wait(timeout: .now() + .nanoseconds(Int(max(0, deadline / .nanoseconds(1))))) == .success else {
            throw busy(kind, deadline)
        }
        defer { gate.signal() }
        return try body()
    }

    private static func busy(_ kind: Kind, _ deadline: Duration) -> LatchkeyError {
        LatchkeyError(
            .timedOut,
            "another process \(kind.holding) for longer than \(deadline.components.seconds) s; nothing was changed"
        )
    }
}

/// The refresh and commit locks (``RefreshLock/Kind``) of a store kept in memory,
/// which it shares with every vault opened on it, as processes on one store share
/// its lock files (`LatchkeyTesting`'s `InMemoryBackend` holds one).
package final class MemoryStoreLocks: Sendable {
    private let refresh = DispatchSemaphore(value: 1)
    private let commit = DispatchSemaphore(value: 1)

    /// New locks, both free.
    package init() {}

    /// The semaphore that is lock `kind`.
    fileprivate func gate(_ kind: RefreshLock.Kind) -> DispatchSemaphore {
        switch kind {
        case .refresh: refresh
        case .commit: commit
        }
    }
}
