/// The verdict on one audit trail of a namespace, as ``Vault/verifyAudit()-2gsuw`` gives it.
public struct AuditTrailVerification: Sendable, Equatable, Codable {
    /// The trail file's path.
    public let path: String
    /// Whether the trail is intact, or where and why it is broken.
    public let verification: AuditVerification
}
