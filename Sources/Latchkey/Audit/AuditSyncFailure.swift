/// An audit trail whose deferred entry ``Vault/settleAudit()-6yyh3`` could not make durable.
/// The entry is written, and every reader sees it; the next append to the trail, in any
/// process, anchors it.
public struct AuditSyncFailure: Sendable {
    /// The trail file's path.
    public let path: String
    /// Why the entry could not be made durable or anchored.
    public let error: LatchkeyError
}
