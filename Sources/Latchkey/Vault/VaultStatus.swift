/// What ``Vault/status()-16kjr`` reports: where the credentials are, why, how well
/// they are protected, and how many there are. Never a value.
public struct VaultStatus: Sendable, Codable {
    /// The app namespace.
    public let appID: AppID
    /// The store in use.
    public let backend: BackendKind
    /// Why that store is in use, such as "no Secret Service (no session bus), so the encrypted file is used".
    public let reason: String
    /// The protection, in plain words.
    public let protection: String
    /// The policy's name and where it came from.
    public let policyName: String
    /// Where the policy came from: a file path or `built-in:<name>`.
    public let policySource: String
    /// The store directory; nil for a vault kept in memory (`LatchkeyTesting`'s test vault).
    public let storeDirectory: String?
    /// The encrypted vault file, when the file is the store in use or a leftover exists.
    public let fileVaultPath: String?
    /// Whether a leftover file vault waits to be migrated into the Secret Service.
    public let leftoverFileVault: Bool
    /// Whether a username is remembered.
    public let usernameRemembered: Bool
    /// The user's setting for remembering the username.
    public let usernameMemoryAllowed: Bool
    /// How many sessions there are (expired ones included until read).
    public let sessionCount: Int
    /// How many items in the Secret Service have a payload that cannot be read (the
    /// provider lost it); `logout` and `wipe` remove them. Always 0 for another store.
    public let damagedItemCount: Int
    /// How many accounts have sessions.
    public let accountCount: Int
    /// How many named secrets there are (expired ones included until read).
    public let secretCount: Int
    /// How many rotated grants whose save failed after the endpoint answered are kept for
    /// the next refresh of their session (`pending.vault`, a key-file vault in the namespace's
    /// directory under every policy: it protects against copies of that file alone).
    public let pendingRotationCount: Int
    /// The audit trail files, or empty when auditing is off.
    public let auditTrails: [String]
}
