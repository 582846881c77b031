/// What ``Vault/open(appID:policy:storeDirectory:backend:passphrase:)`` did:
/// which store it chose and why, whether that was a fallback, and what it
/// migrated. Never a value.
public struct OpenReport: Sendable, Equatable {
    /// The store in use.
    public let backend: BackendKind
    /// Why that store is in use, in plain words.
    public let reason: String
    /// Why the Secret Service could not be used, when the vault fell back to
    /// the encrypted file; nil otherwise.
    public let fallback: String?
    /// What was moved from a leftover file vault into the Secret Service, when
    /// opening migrated one; nil otherwise.
    public let migration: MigrationReport?

    init(backend: BackendKind, reason: String, fallback: String? = nil, migration: MigrationReport? = nil) {
        self.backend = backend
        self.reason = reason
        self.fallback = fallback
        self.migration = migration
    }
}
