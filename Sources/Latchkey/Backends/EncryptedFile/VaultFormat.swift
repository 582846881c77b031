/// Seals and opens a whole vault file (version 2, or 1 when reading): header, nonce, and the
/// XChaCha20-Poly1305 ciphertext of the entry table with the header as
/// associated data (see `docs/FILE-FORMAT.md`).
enum VaultFormat {
    /// The complete file for `items` under `header` (whose key check must be `keys.check`),
    /// with a fresh random nonce.
    static func seal(_ items: [ItemKey: StoredItem], header: VaultHeader, keys: VaultKeys) -> [UInt8] {
        let headerBytes = header.encoded()
        let (nonce, ciphertext) = Sodium.seal(
            VaultTable.encode(items), additionalData: headerBytes, key: keys.encryption)
        return headerBytes + nonce + ciphertext
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
        guard keys.matches(check: header.keyCheck) else {
            throw LatchkeyError(.wrongKey, "the passphrase or key file does not open \(path)")
        }
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
