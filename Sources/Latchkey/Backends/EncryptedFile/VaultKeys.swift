/// The keys one vault salt needs, derived from the master key (see
/// `docs/FILE-FORMAT.md`, "Keys"): the XChaCha20-Poly1305 key, and the key
/// check value stored in the header to tell a wrong key from altered data.
struct VaultKeys: Sendable {
    /// The AEAD key.
    let encryption: SecretBytes
    /// BLAKE2b-256 keyed with the master key over a constant and the salt.
    let check: [UInt8]

    static let encryptionContext = Array("latchkey vault v1 encryption key".utf8)
    static let checkContext = Array("latchkey vault v1 key check".utf8)

    /// Derives both from `master` (32 bytes) and the vault's salt.
    init(master: SecretBytes, salt: [UInt8]) {
        encryption = Sodium.keyedHashSecret(Self.encryptionContext + salt, key: master, length: Sodium.aeadKeyLength)
        check = Sodium.keyedHash(Self.checkContext + salt, key: master, length: VaultHeader.keyCheckLength)
    }

    /// Whether `candidate` is this key's check value, compared in constant time.
    func matches(check candidate: [UInt8]) -> Bool {
        check.withUnsafeBytes { mine in candidate.withUnsafeBytes { Sodium.constantTimeEqual(mine, $0) } }
    }
}
