/// What a vault needs of an audit trail: ``AuditTrail`` (a file beside the
/// store) or ``MemoryAuditTrail`` (the test vault's, kept in memory). Both
/// chain and verify their entries the same way (``AuditChain``).
package protocol AuditLog: Sendable {
    /// Where the trail is, as ``AuditTrailVerification`` and the status show it.
    var path: String { get }

    /// Runs `body` with an appender while no other writer appends, after
    /// checking that the trail can be continued.
    /// - Throws: When the trail cannot be continued; what `body` throws.
    func appending<Result>(_ body: (any AuditAppender) throws -> Result) throws -> Result

    /// Checks the whole trail, without changing anything.
    func verify() throws -> AuditVerification

    /// The entries after `sequence` (all when nil), oldest first.
    func entries(since sequence: UInt64?) throws -> [AuditEntry]

    /// Every `audit.reset` entry, oldest first.
    func resets() throws -> [AuditEntry]

    /// Sets a broken trail aside and starts a new chain; nil when it verified.
    func reset() throws -> AuditResetReport?
}

/// Appends entries to a trail opened by ``AuditLog/appending(_:)``.
package protocol AuditAppender {
    /// Appends one entry.
    /// - Throws: `.invalidInput` for a malformed event; the trail's write errors.
    @discardableResult
    func append(
        _ event: AuditEvent, outcome: AuditOutcome, backend: BackendKind, account: String?, detail: String?
    ) throws -> AuditEntry
}

extension AuditTrail: AuditLog {
    package func appending<Result>(_ body: (any AuditAppender) throws -> Result) throws -> Result {
        try withAppender { try body($0) }
    }
}

extension AuditTrail.Appender: AuditAppender {}
