import Dispatch

/// The lock that lets one caller at a time refresh or replace a namespace's
/// grants: an exclusive `flock` on `refresh.lock` in the namespace's directory,
/// taken by every thread, process and agent alike (each takes it on its own
/// open file, so threads of one process exclude each other too). The kernel
/// releases it when its holder closes the file or dies, so a killed refresher
/// never leaves it held.
enum RefreshLock {
    /// The lock file's name in the namespace's directory.
    static let fileName = "refresh.lock"

    /// Runs `body` holding the lock of `directory`'s namespace, waiting at most `deadline` for it.
    /// - Parameters:
    ///   - directory: The namespace's directory (created when missing).
    ///   - deadline: How long to wait for another holder.
    ///   - body: What runs under the lock.
    /// - Returns: What `body` returns.
    /// - Throws: `LatchkeyError` `.timedOut` when the lock was not free within
    ///   `deadline`; file errors; what `body` throws.
    static func withLock<R>(in directory: NamespaceDirectory, deadline: Duration, _ body: () throws -> R) throws -> R {
        try directory.prepare()
        let path = directory.file(fileName)
        let file = try POSIX.File.open(path, .readWriteCreate(permissions: 0o600))
        try PrivateFiles.requirePrivate(file.status(), path: path, directory: false)
        let giveUp = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, deadline / .nanoseconds(1)))
        var pause = Duration.milliseconds(1)
        while try !file.tryLockExclusively() {
            guard DispatchTime.now().uptimeNanoseconds < giveUp else { throw busy(deadline) }
            POSIX.sleep(pause)
            pause = min(pause * 2, .milliseconds(20))
        }
        return try withExtendedLifetime(file) { try body() }
    }

    /// Runs `body` holding `gate`, the lock of a vault kept in memory (no directory,
    /// so no other process can reach its grants), waiting at most `deadline` for it.
    static func withLock<R>(_ gate: DispatchSemaphore, deadline: Duration, _ body: () throws -> R) throws -> R {
        guard gate.wait(timeout: .now() + .nanoseconds(Int(max(0, deadline / .nanoseconds(1))))) == .success else {
            throw busy(deadline)
        }
        defer { gate.signal() }
        return try body()
    }

    private static func busy(_ deadline: Duration) -> LatchkeyError {
        LatchkeyError(
            .timedOut,
            "another process kept refreshing this session for longer than \(deadline.components.seconds) s; nothing was changed"
        )
    }
}
