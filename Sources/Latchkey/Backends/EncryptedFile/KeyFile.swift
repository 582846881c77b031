/// The key-file key source's file: exactly 32 random bytes, mode 0600, created
/// once, under the vault's lock, and never replaced.
enum KeyFile {
    /// The key's length.
    static let length = 32

    /// Reads the key at `path`.
    /// - Returns: The key, or nil when there is no key file.
    /// - Throws: `.insecurePermissions` when it is not private; `.wrongKey` when
    ///   it does not hold exactly 32 bytes.
    static func read(_ path: String) throws -> SecretBytes? {
        let file: POSIX.File
        do {
            file = try POSIX.File.open(path, .read)
        } catch let error as LatchkeyError where error.code == .notFound {
            return nil
        }
        try PrivateFiles.requirePrivate(file.status(), path: path, directory: false)
        guard let key = try file.readSecret(count: length) else {
            throw LatchkeyError(.wrongKey, "key file \(path) does not hold exactly \(length) bytes")
        }
        return key
    }

    /// Reads the key at `path`, creating it with fresh random bytes when absent.
    /// Call it while holding the vault's lock.
    /// - Returns: The key.
    static func readOrCreate(_ path: String) throws -> SecretBytes {
        if let key = try read(path) { return key }
        let fresh = SecretBytes.random(count: length)
        if try PrivateFiles.createIfAbsent(path, with: fresh) { return fresh }
        guard let key = try read(path) else {
            throw LatchkeyError(.io, "key file \(path) vanished while it was being created")
        }
        return key
    }
}
