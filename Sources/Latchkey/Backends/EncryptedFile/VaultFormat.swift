/// Seals and opens a whole vault file (version 2, or 1 when reading): header, nonce, and the
/// XChaCha20-Poly1305 ciphertext of the entry table with the header as
/// associated data (see `docs/FILE-FORMAT.md`).
enum VaultFormat {
    /// The most bytes a vault file may hold (64 MiB), and so the most a reader reads: checked
    /// against the file's size before reading (a 2 GiB file is refused at once, not read and
    /// decrypted), and by every writer, so that no vault Latchkey writes is one it refuses.
    /// Room for 60,000 sessions of 1 KiB, or 60 of the CLI's largest (1 MiB).
    static let maximumFileLength = 64 << 20

    /// The complete file for `items` under `header` (whose key check must be `keys.check`),
    /// with a fresh random nonce.
    /// - Throws: `.invalidInput` when it would be longer than ``maximumFileLength`` (nothing is written).
    static func seal(_ items: [ItemKey: StoredItem], header: VaultHeader, keys: VaultKeys, path: String) throws
        -> [UInt8]
    {
        let tableLength = VaultTable.encodedLength(items)
        let length = VaultHeader.lengthWithNonce + tableLength + Sodium.aeadTagLength
        guard length <= maximumFileLength else {
            throw LatchkeyError(
                .invalidInput,
                "\(path) would be \(length) bytes long; the most a vault holds is \(maximumFileLength) bytes (nothing was changed)"
            )
        }
        let headerBytes = header.encoded()
        let (nonce, ciphertext) = Sodium.seal(
            VaultTable.encode(items), additionalData: headerBytes, key: keys.encryption)
        return headerBytes + nonce + ciphertext
    }

    /// The error for keys whose check does not match the vault's header.
    static func wrongKey(_ path: String) -> LatchkeyError {
        LatchkeyError(.wrongKey, "the passphrase or key file does not open \(path)")
    }

    /// Opens `file`, whose header decoded as `header`, with `keys` derived for it
    /// (steps 7 to 9 of "Reading" in `docs/FILE-FORMAT.md`).
    /// - Parameters:
    ///   - file: The whole vault file.
    ///   - header: Its decoded header.
    ///   - keys: The keys derived from the configured key source and the header's salt.
    ///   - path: The vault's path, for error messages.
    /// - Returns: The items (checked, decoded one by one when asked for).
    /// - Throws: `.wrongKey` when the key check does not match; `.tampered` when
    ///   the ciphertext does not authenticate or the table is malformed.
    static func open(_ file: [UInt8], header: VaultHeader, keys: VaultKeys, path: String) throws -> VaultEntries {
        guard keys.matches(check: header.keyCheck) else { throw wrongKey(path) }
        let headerEnd = VaultHeader.length
        let nonceEnd = VaultHeader.lengthWithNonce
        guard file.count >= VaultHeader.minimumFileLength,
            let table = Sodium.open(
                file[nonceEnd...], nonce: file[headerEnd..<nonceEnd],
                additionalData: file[..<headerEnd], key: keys.encryption)
        else {
            throw LatchkeyError(
                .tampered, "\(path) failed authentication: it was altered, truncated or extended",
                cFunction: "crypto_aead_xchacha20poly1305_ietf_decrypt")
        }
        return try VaultEntries(table: table, path: path)
    }
}
