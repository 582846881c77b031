extension Vault {
    /// Appends one entry to the trail of the store in use, outside any
    /// operation (opening's `backend.fallback`).
    ///
    /// When the entry cannot be written, the policy decides: under
    /// `audit.onFailure` `fail` the audit error is thrown with its own code;
    /// under `warn` it is kept for ``auditWarnings``.
    func record(_ event: AuditEvent, _ outcome: AuditOutcome, account: String? = nil, detail: String? = nil) throws {
        guard let audit else { return }
        do {
            _ = try audit.appending {
                try $0.append(event, outcome: outcome, backend: backend.kind, account: account, detail: detail)
            }
        } catch let error as LatchkeyError {
            guard policy.audit.failureMode == .warn else {
                throw LatchkeyError(
                    error.code,
                    "the \(event) entry could not be written to the audit trail (\(error.message)); audit.onFailure is \"fail\""
                )
            }
            keepAuditWarning(error, missing: event)
        }
    }

    /// Keeps, for ``auditWarnings``, that `event`'s entry could not be written (`audit.onFailure` `warn`).
    func keepAuditWarning(_ error: LatchkeyError, missing event: AuditEvent) {
        droppedAuditEntries.withLock {
            $0.append(LatchkeyError(error.code, "the \(event) entry is missing from the audit trail: \(error.message)"))
        }
    }

    /// The audit entries this vault could not write and let pass because the
    /// policy's `audit.onFailure` is `warn`, oldest first; empty under `fail`,
    /// where such an operation throws instead. Show them to the user.
    public var auditWarnings: [LatchkeyError] {
        droppedAuditEntries.withLock { $0 }
    }

    /// The audit entries of every trail of this namespace (the store in use, and
    /// the encrypted file's when the Secret Service is in use), oldest first.
    /// - Parameter sequence: Only entries after this sequence number (of each trail).
    /// - Returns: The entries, merged by time.
    /// - Throws: `LatchkeyError` when a trail cannot be read.
    public func auditEntries(since sequence: UInt64? = nil) throws -> [AuditEntry] {
        let entries = try auditTrails.flatMap { try $0.entries(since: sequence) }
        return entries.sorted { $0.time < $1.time }
    }

    /// Every reset of every trail of this namespace (the store in use, and the
    /// encrypted file's when the Secret Service is in use): the `audit.reset`
    /// entry that starts the current chain and those that started the chains
    /// earlier resets kept aside, oldest first. Read for display, like
    /// `auditEntries(since:)`; `verifyAudit()` checks the current chains.
    /// - Returns: The `audit.reset` entries, merged by time.
    /// - Throws: `LatchkeyError` when a trail or a kept segment cannot be read.
    public func auditResets() throws -> [AuditEntry] {
        try auditTrails.flatMap { try $0.resets() }.sorted { $0.time < $1.time }
    }

    /// Verifies every trail of this namespace, without changing anything.
    /// - Returns: Each trail's path and verdict.
    /// - Throws: `LatchkeyError` when a trail or its key cannot be read.
    public func verifyAudit() throws -> [AuditTrailVerification] {
        try auditTrails.map { AuditTrailVerification(path: $0.path, verification: try $0.verify()) }
    }

    /// Recovers, visibly, from a broken audit trail (its anchor, key or tail
    /// gone or damaged): each trail of this namespace that does not verify is
    /// renamed beside itself (never deleted), and a new chain starts whose
    /// first entry, `audit.reset`, records the kept segment, the last verified
    /// sequence number and why. Until then, every operation on a broken trail
    /// fails with `.tampered`. Intact trails are left alone.
    /// - Returns: One report per trail that was reset; empty when all verified.
    /// - Throws: `LatchkeyError` when a file or the store cannot be written.
    public func resetAuditTrail() throws -> [AuditResetReport] {
        try auditTrails.compactMap { try $0.reset() }
    }

    private var auditTrails: [any AuditLog] {
        [audit, fileAudit].compactMap { $0 }
    }
}
