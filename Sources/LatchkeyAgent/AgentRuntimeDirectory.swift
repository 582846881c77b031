import Latchkey
import LatchkeySystem

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

    /// The runtime directory itself (`XDG_RUNTIME_DIR`).
    package var runtimeDirectory: String { String(path.dropLast("/latchkey".count)) }

    /// What a client finds where its agent's socket should be.
    package enum Finding: Sendable, Equatable {
        /// The runtime directory, `latchkey/` and the socket pass every check: connect to it.
        case trusted
        /// There is no socket; `mayStart` says whether the directories are fit for
        /// an agent to be started there.
        case absent(mayStart: Bool)
        /// Something is there but fails a check: never send it anything. The reason says which.
        case untrusted(String)
    }

    /// Checks, before a client sends anything, that the socket is this user's
    /// agent's: the runtime directory and `latchkey/` are directories (not
    /// symbolic links) owned by the effective uid and closed to everyone else
    /// (0700), and the socket is a socket owned by the uid that only it can use (0600).
    /// The peer's uid is checked after connecting (``POSIX/LocalSocket/peerUserID()``).
    package func inspect() -> Finding {
        func problem(_ path: String, directory: Bool) -> String? {
            let status: POSIX.Status?
            do {
                status = try POSIX.status(of: path)
            } catch {
                return "\(path) cannot be examined (\(error))"
            }
            guard let status else { return nil }
            let kind = directory ? "directory" : "socket"
            guard directory ? status.isDirectory : status.typeName == "socket" else {
                return "\(path) is a \(status.typeName), not a \(kind)"
            }
            guard status.owner == POSIX.effectiveUserID else {
                return "\(path) belongs to user \(status.owner), not to this user (\(POSIX.effectiveUserID))"
            }
            guard status.permissions & (directory ? 0o7077 : 0o7177) == 0 else {
                return
                    "\(path) has mode 0\(String(status.permissions, radix: 8)), not \(directory ? "0700" : "0600")"
            }
            return nil
        }
        let socketExists = (try? POSIX.status(of: socketPath)) != nil
        for (directory, required) in [(runtimeDirectory, true), (path, false)] {
            let exists = (try? POSIX.status(of: directory)) != nil
            if !exists && !required { return .absent(mayStart: true) }
            if let reason = problem(directory, directory: true) ?? (exists ? nil : "\(directory) is missing") {
                return socketExists ? .untrusted(reason) : .absent(mayStart: false)
            }
        }
        guard socketExists else { return .absent(mayStart: true) }
        if let reason = problem(socketPath, directory: false) { return .untrusted(reason) }
        return .trusted
    }

    /// The agent's socket.
    package var socketPath: String { path + "/agent.sock" }
    /// Where the agent makes its socket before renaming it to ``socketPath``, so the
    /// socket appears there with its final mode.
    package var newSocketPath: String { path + "/agent.new" }
    /// The lock the running agent holds.
    package var lockPath: String { path + "/agent.lock" }
    /// Where an autostarted agent writes its log.
    package var logPath: String { path + "/agent.log" }

    /// Creates the directory when missing and checks it (and the socket, when
    /// there is one) is private.
    /// - Throws: `.insecurePermissions` naming the path; `.cannotCreate`.
    package func prepare() throws {
        try PrivateFiles.requirePrivate(runtimeDirectory, directory: true)
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
