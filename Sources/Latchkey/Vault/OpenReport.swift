/// What ``Vault/open(appID:policy:storeDirectory:backend:passphrase:unlock:)-42bn`` did:
/// which store it chose and why, whether that was a fallback, and what it
/// migrated. Never a value.
public struct OpenReport: Sendable, Equatable, Codable {
    /// The store in use.
    public let backend: BackendKind
    /// Why that store is in use, in plain words.
    public let reason: String
    /// Why the Secret Service could not be used, when this open is the one at
    /// which the namespace fell back to the encrypted file (the open that recorded
    /// `backend.fallback`); nil otherwise, including later opens while the Secret
    /// Service stays away, whose ``backend`` and ``reason`` still say the file is in
    /// use. So an app that tells its user about a fallback tells them once.
    public let fallback: String?
    /// What was moved from a leftover file vault into the Secret Service, when
    /// opening migrated one; nil otherwise.
    public let migration: MigrationReport?
    /// Why the Secret Service could not be used, on every open at which the `auto`
    /// choice fell back to the encrypted file (unlike ``fallback``, not only the
    /// first); nil when the Secret Service is in use or the file was chosen. An app
    /// that writes through such a vault tells its user where the write went, every time.
    public let secretServiceUnavailable: String?

    init(
        backend: BackendKind, reason: String, fallback: String? = nil, migration: MigrationReport? = nil,
        secretServiceUnavailable: String? = nil
    ) {
        self.backend = backend
        self.reason = reason
        self.fallback = fallback
        self.migration = migration
        self.secretServiceUnavailable = secretServiceUnavailable
    }
}
