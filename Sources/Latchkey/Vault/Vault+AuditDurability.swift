extension Vault {
    /// When the audit entries of a vault's operations reach the disk.
    public enum AuditDurability: Sendable, Equatable {
        /// Each entry is made durable (`fsync`) and the trail's anchor moved to it before
        /// the operation returns: what a process that opens a vault for one task wants.
        case immediate
        /// Each entry is written to the trail before the operation returns, so every
        /// reader sees it at once, and a process killed before ``Vault/settleAudit()-6yyh3``
        /// leaves a trail every reader accepts (one entry past its anchor, as a crash
        /// between an append's two steps leaves it; the next append, in any process,
        /// anchors it first). Its `fsync` and the anchor's move wait for
        /// ``Vault/settleAudit()-6yyh3``: what a server answering requests on a vault it keeps
        /// open wants, calling it once each answer is sent, so that its client does not
        /// wait for the disk.
        case deferred
    }

    /// When this vault's audit entries reach the disk; ``AuditDurability/immediate``
    /// unless the app sets it. Entries deferred before it is set back to
    /// ``AuditDurability/immediate`` wait for ``settleAudit()-6yyh3`` (or the trail's next append).
    public var auditDurability: AuditDurability {
        get { auditDeferral.isDeferring ? .deferred : .immediate }
        set { auditDeferral.isDeferring = newValue == .deferred }
    }

    /// Makes every audit entry this vault deferred (``AuditDurability/deferred``) durable,
    /// and moves each trail's anchor to it, under the trail's lock. A trail that another
    /// append, a trim, a reset or a wipe changed since needs nothing (that change anchored
    /// or replaced the entry), and nothing is created: a namespace removed since stays
    /// removed. Call it once the answer of the operations is sent; it never blocks for
    /// longer than one `fsync` and one anchor write per trail.
    /// - Returns: What failed, by trail; empty when every entry is durable. The entries
    ///   that failed are still written, and the next append to their trail anchors them.
    public func settleAudit() -> [AuditSyncFailure] {
        auditDeferral.settle()
    }
}
