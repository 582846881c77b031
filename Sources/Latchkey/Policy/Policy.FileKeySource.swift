extension Policy {
    /// Where the encrypted file's key comes from (`file.keySource`).
    public enum FileKeySource: String, Sendable, CaseIterable {
        /// 32 random bytes in a separate 0600 key file: protects against copies of the vault alone.
        case keyfile
        /// A passphrase stretched with Argon2id.
        case passphrase
    }
}
