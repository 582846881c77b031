/// Where the agent of this user lives: `$XDG_RUNTIME_DIR/latchkey/`, a private
/// (0700) directory holding `agent.sock` (0600), `agent.lock` (held by the
/// running agent for its whole life, so there is never more than one) and
/// `agent.log` (an autostarted agent's standard error). Checked like every other
/// Latchkey file: owned by this user, never accessible to others.
package struct AgentRuntimeDirectory: Sendable {
    /// The directory.
    package let path: String

    /// The directory under `runtimeDirectory` (`XDG_RUNTIME_DIR`).
    /// - Throws: `.unavailable` when `runtimeDirectory` is missing, relative or not a directory.
    package init(runtimeDirectory: String?) throws {
        guard let runtime = runtimeDirectory, runtime.hasPrefix("/") else {
            throw LatchkeyError(
                .unavailable,
                "XDG_RUNTIME_DIR is not set to an absolute path, so there is no place for the agent's socket")
        }
        guard let status = try POSIX.status(of: runtime), status.isDirectory else {
            throw LatchkeyError(.unavailable, "XDG_RUNTIME_DIR (\(runtime)) is not a directory")
        }
        path = runtime.hasSuffix("/") ? runtime + "latchkey" : runtime + "/latchkey"
    }

    /// The agent's socket.
    package var socketPath: String { path + "/agent.sock" }
    /// The lock the running agent holds.
    package var lockPath: String { path + "/agent.lock" }
    /// Where an autostarted agent writes its log.
    package var logPath: String { path + "/agent.log" }

    /// Creates the directory when missing and checks it (and the socket, when
    /// there is one) is private.
    /// - Throws: `.insecurePermissions` naming the path; `.cannotCreate`.
    package func prepare() throws {
        try PrivateFiles.prepareDirectory(path)
        if let status = try POSIX.status(of: socketPath) {
            guard status.typeName == "socket", status.owner == POSIX.effectiveUserID, status.permissions & 0o077 == 0
            else {
                throw LatchkeyError(
                    .insecurePermissions,
                    "\(socketPath) must be a socket of this user with mode 0600 (it is a \(status.typeName) of user \(status.owner), mode 0\(String(status.permissions, radix: 8)))"
                )
            }
        }
    }

    /// The identity (device, inode) of the socket file, or nil when there is none.
    package func socketIdentity() throws -> [UInt64]? {
        try POSIX.status(of: socketPath).map { [$0.device, $0.inode] }
    }

    /// Removes the socket file (a stale one, or the agent's own as it stops).
    package func removeSocket() throws {
        try POSIX.removeFile(socketPath)
    }

    /// Takes the agent lock for this process's life unless another agent holds it.
    /// - Returns: The held lock (keep it), or nil when another agent runs.
    package func claimAgentLock() throws -> AgentLock? {
        let file = try POSIX.File.open(lockPath, .readWriteCreate(permissions: 0o600))
        try PrivateFiles.requirePrivate(file.status(), path: lockPath, directory: false)
        return try file.tryLockExclusively() ? AgentLock(file: file) : nil
    }
}

/// The agent lock, held while this value lives.
package final class AgentLock: Sendable {
    private let file: POSIX.File

    init(file: POSIX.File) {
        self.file = file
    }
}
