/// File-system rules every Latchkey file follows: private directories (0700)
/// and files (0600) owned by the current user, locking, and atomic, durable
/// replacement. Built on the wrappers in `Internals/POSIX/`.
package enum PrivateFiles {
    /// Reads a secret file to its end: it must be a private (0600) regular file
    /// of this user.
    /// - Parameters:
    ///   - path: The file.
    ///   - limit: The most bytes accepted.
    /// - Returns: The file's bytes, in zeroing memory.
    /// - Throws: `.notFound`, `.insecurePermissions` naming the path,
    ///   `.invalidInput` when it is longer than `limit`, `.io`.
    package static func readSecret(atPath path: String, limit: Int) throws -> SecretBytes {
        let file = try POSIX.File.open(path, .read)
        try requirePrivate(file.status(), path: path, directory: false)
        return try POSIX.readSecret(from: file.descriptor, limit: limit, untilEnd: true).secret
    }

    /// Reads a file that holds no secret but decides what Latchkey does (a
    /// policy): it must be a regular file owned by this user or root and not
    /// writable by its group or others, in a directory with the same properties.
    /// - Parameters:
    ///   - path: The file.
    ///   - limit: The most bytes accepted.
    /// - Returns: The file's bytes.
    /// - Throws: `.notFound`; `.insecurePermissions` naming the file or its
    ///   directory; `.invalidInput` when it is not a regular file or is longer than `limit`; `.io`.
    package static func readProtected(atPath path: String, limit: Int) throws -> [UInt8] {
        let file = try POSIX.File.open(path, .read)
        try requireProtected(file.status(), path: path, directory: false)
        let directory = directoryName(of: path)
        if let status = try POSIX.status(of: directory) {
            try requireProtected(status, path: directory, directory: true)
        }
        return try file.readAll(limit: limit)
    }

    /// Checks that a file or directory that holds no secret cannot be changed by
    /// anyone but this user or root.
    private static func requireProtected(_ status: POSIX.Status, path: String, directory: Bool) throws {
        guard directory ? status.isDirectory : status.isRegularFile else {
            throw POSIX.wrongType(path, status, expected: directory ? "directory" : "regular file")
        }
        guard status.owner == POSIX.effectiveUserID || status.owner == 0 else {
            throw LatchkeyError(
                .insecurePermissions,
                "\(path) is owned by user \(status.owner), not by this user (\(POSIX.effectiveUserID)) or root, so it is not trusted"
            )
        }
        guard status.permissions & 0o022 == 0 else {
            let mode = String(status.permissions, radix: 8)
            throw LatchkeyError(
                .insecurePermissions,
                "\(path) has mode 0\(mode); others could change it, so it is not trusted (chmod go-w)")
        }
    }

    /// Creates `path` (and its missing parents) as private directories, then
    /// checks that `path` is private.
    /// - Throws: `.insecurePermissions` naming the path when it is accessible to
    ///   others or owned by someone else; `.cannotCreate` when it cannot be made.
    package static func prepareDirectory(_ path: String) throws {
        // The usual case, on every write: the directory is there already.
        if try requirePrivate(path, directory: true) != nil { return }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            try POSIX.makeDirectory(prefix, permissions: 0o700)
        }
        try requirePrivate(path, directory: true)
    }

    /// Checks that `path` is owned by this user and not accessible to its group or others.
    /// - Parameters:
    ///   - path: The file or directory.
    ///   - directory: Whether it must be a directory (otherwise a regular file).
    /// - Returns: The path's status, or nil when it does not exist.
    /// - Throws: `.insecurePermissions` naming the path (a symbolic link
    ///   included); `.invalidInput` when it is of the wrong type (a FIFO, say).
    @discardableResult
    package static func requirePrivate(_ path: String, directory: Bool) throws -> POSIX.Status? {
        guard let status = try POSIX.status(of: path) else { return nil }
        try requirePrivate(status, path: path, directory: directory)
        return status
    }

    /// Checks an already obtained status; see ``requirePrivate(_:directory:)``.
    package static func requirePrivate(_ status: POSIX.Status, path: String, directory: Bool) throws {
        guard directory ? status.isDirectory : status.isRegularFile else {
            throw POSIX.wrongType(path, status, expected: directory ? "directory" : "regular file")
        }
        guard status.owner == POSIX.effectiveUserID else {
            throw LatchkeyError(
                .insecurePermissions,
                "\(path) is owned by user \(status.owner), not by this user (\(POSIX.effectiveUserID))")
        }
        guard status.permissions & 0o077 == 0 else {
            let mode = String(status.permissions, radix: 8)
            let wanted = directory ? "0700" : "0600"
            throw LatchkeyError(
                .insecurePermissions,
                "\(path) has mode 0\(mode); it must not be accessible to group or others (chmod \(wanted))")
        }
    }

    /// Runs `body` while holding an exclusive `flock` on `lockPath` (created 0600).
    /// The lock is released when `body` returns or throws, and when the process dies.
    package static func withExclusiveLock<R>(_ lockPath: String, _ body: () throws -> R) throws -> R {
        try holding(POSIX.File.open(lockPath, .readWriteCreate(permissions: 0o600)), body)
    }

    /// ``withExclusiveLock(_:_:)`` on a lock file that exists, creating nothing.
    /// - Returns: What `body` returns; nil, without running it, when there is no lock file.
    static func withExclusiveLockIfExists<R>(_ lockPath: String, _ body: () throws -> R) throws -> R? {
        let lock: POSIX.File
        do {
            lock = try POSIX.File.open(lockPath, .readWrite)
        } catch let error as LatchkeyError where error.code == .notFound {
            return nil
        }
        return try holding(lock, body)
    }

    /// Runs `body` holding `lock`, an open lock file that must be private, exclusively.
    private static func holding<R>(_ lock: POSIX.File, _ body: () throws -> R) throws -> R {
        try requirePrivate(lock.status(), path: lock.path, directory: false)
        try lock.lockExclusively()
        return try withExtendedLifetime(lock) { try body() }
    }

    /// The name prefix of temporary files, so leftovers of a crashed writer can be found.
    static let temporaryPrefix = ".latchkey-tmp-"

    /// Replaces `path` atomically and durably with `bytes`: a new 0600 file in the
    /// same directory (`O_EXCL`), write, `fsync`, `rename` over `path`, `fsync`
    /// of the directory. A crash at any point leaves the old or the new file, whole.
    /// Call it while holding the file's lock.
    package static func replace(_ path: String, with bytes: [UInt8]) throws {
        try publishDurably(
            path, write: { try $0.writeAll(bytes) },
            publish: { temporary in
                try POSIX.rename(temporary, to: path)
            })
    }

    /// Replaces `path` atomically and durably with a secret's bytes, as
    /// ``replace(_:with:)`` does, without copying them out of zeroing memory.
    static func replaceSecret(_ path: String, with secret: SecretBytes) throws {
        try publishDurably(
            path, write: { try $0.writeAll(secret) },
            publish: { temporary in
                try POSIX.rename(temporary, to: path)
            })
    }

    /// Removes temporary files a crashed writer left for `path`. Call it while holding the lock.
    package static func removeLeftovers(of path: String) throws {
        let directory = directoryName(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        for entry in try POSIX.directoryEntries(directory) where entry.hasPrefix(temporaryPrefix + name + ".") {
            try POSIX.removeFile(directory + "/" + entry)
        }
    }

    /// Removes `path` durably (`unlink` and `fsync` of the directory); absent is fine.
    package static func remove(_ path: String) throws {
        try POSIX.removeFile(path)
        try POSIX.syncDirectory(directoryName(of: path))
    }

    /// Like ``withExclusiveLock(_:_:)``, but `body` may remove the lock file while
    /// it holds the lock: after `flock` is granted the lock file's identity is
    /// compared with what `lockPath` names now, and a process that locked a file
    /// removed in the meantime starts over on the new one.
    static func withRemovableExclusiveLock<R>(_ lockPath: String, _ body: () throws -> R) throws -> R {
        while true {
            let lock = try POSIX.File.open(lockPath, .readWriteCreate(permissions: 0o600))
            let status = try lock.status()
            try requirePrivate(status, path: lockPath, directory: false)
            try lock.lockExclusively()
            guard let current = try POSIX.status(of: lockPath),
                current.device == status.device, current.inode == status.inode
            else { continue }
            return try withExtendedLifetime(lock) { try body() }
        }
    }

    /// Creates `path` with `secret` as its content (0600), durably, only when it
    /// does not exist yet: a complete temporary file is given the name with
    /// `link`, so no reader ever sees a partial file and no existing file is replaced.
    /// - Returns: false when `path` already existed (and was left as it is).
    static func createIfAbsent(_ path: String, with secret: SecretBytes) throws -> Bool {
        try publishDurably(
            path, write: { try $0.writeAll(secret) },
            publish: { temporary in
                let created = try POSIX.link(temporary, to: path)
                try POSIX.removeFile(temporary)
                return created
            })
    }

    /// Writes a new 0600 temporary file beside `path` (`O_EXCL`) with `write`,
    /// `fsync`s it, hands it to `publish` to give it its final name, then
    /// `fsync`s the directory. The temporary file is removed when anything fails.
    private static func publishDurably<R>(
        _ path: String, write: (POSIX.File) throws -> Void, publish: (String) throws -> R
    ) throws -> R {
        let directory = directoryName(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let temporary = directory + "/" + temporaryPrefix + name + "." + Hex.encode(Sodium.randomBytes(count: 8))
        let result: R
        do {
            let file = try POSIX.File.open(temporary, .createNew(permissions: 0o600))
            try write(file)
            try file.sync()
            result = try publish(temporary)
        } catch {
            try? POSIX.removeFile(temporary) // best effort: the original error is the one to report
            throw error
        }
        try POSIX.syncDirectory(directory)
        return result
    }

    /// The last component of `path`.
    static func baseName(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// The directory part of `path`.
    package static func directoryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
