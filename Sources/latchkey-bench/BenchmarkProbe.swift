import Latchkey

/// The physical floors a Latchkey operation is compared with, built from the same
/// wrappers the library uses (its `package` `POSIX` and `Sodium`), but without
/// anything Latchkey adds on top (locking, checks, encoding).
enum BenchmarkProbe {
    /// The bare durable-replace sequence: create `<path>.floor-tmp` (`open` with
    /// `O_EXCL`, 0600), `write` all of `bytes`, `fsync`, `rename` over `path`,
    /// `fsync` of the directory. No lock, no random name, no permission check.
    /// - Parameters:
    ///   - path: The file to replace; its directory must exist.
    ///   - bytes: The new content.
    /// - Throws: `LatchkeyError` naming the failing C function (`open`, `write`,
    ///   `fsync`, `rename`).
    static func durablyReplace(_ path: String, with bytes: [UInt8]) throws {
        let temporary = path + ".floor-tmp"
        let file = try POSIX.File.open(temporary, .createNew(permissions: 0o600))
        try file.writeAll(bytes)
        try file.sync()
        try POSIX.rename(temporary, to: path)
        try POSIX.syncDirectory(PrivateFiles.directoryName(of: path))
    }

    /// Runs `crypto_pwhash` (Argon2id) once with `parameters` on a random
    /// passphrase and salt: the cost of unlocking a passphrase vault's key.
    /// - Parameter parameters: The Argon2id cost.
    /// - Throws: `LatchkeyError` `.internal` when `crypto_pwhash` fails.
    static func deriveKey(_ parameters: KDFParameters) throws {
        _ = try Sodium.deriveKey(
            length: Sodium.aeadKeyLength, passphrase: SecretBytes.random(count: 16),
            salt: Sodium.randomBytes(count: Sodium.pwhashSaltLength),
            opsLimit: parameters.opsLimit, memoryLimit: parameters.memoryLimit)
    }

    /// The size of a file in bytes (`lstat`), or nil when it does not exist.
    /// - Parameter path: The file.
    /// - Returns: Its size.
    /// - Throws: `LatchkeyError` when `lstat` fails for another reason than absence.
    static func fileSize(_ path: String) throws -> Int? {
        try POSIX.status(of: path)?.size
    }

    /// The whole content of a file (`open`, `pread`).
    /// - Parameter path: The file.
    /// - Returns: Its bytes.
    /// - Throws: `LatchkeyError` `.notFound` or `.io`.
    static func contents(of path: String) throws -> [UInt8] {
        try POSIX.File.open(path, .read).readAll(limit: 1 << 30)
    }

    /// Replaces a file's content in place (`ftruncate`, `write`), keeping its
    /// inode and mode, without any of the library's atomic machinery: how the
    /// corruption stress test plants a damaged copy.
    /// - Parameters:
    ///   - path: An existing file.
    ///   - bytes: The new content.
    /// - Throws: `LatchkeyError` naming the failing C function.
    static func overwrite(_ path: String, with bytes: [UInt8]) throws {
        let file = try POSIX.File.open(path, .readWriteCreate(permissions: 0o600))
        try file.truncate(to: 0)
        try file.writeAll(bytes)
    }
}
