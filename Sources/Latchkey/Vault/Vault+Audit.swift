extension Vault {
    /// Appends one entry to the trail of the store in use, outside any
    /// operation (opening's `backend.fallback`).
    ///
    /// When the entry cannot be written, the policy decides: under
    /// `audit.onFailure` `fail` the audit error is thrown with its own code;
    /// under `warn` it is kept for ``auditWarnings``.
    func record(_ event: AuditEvent, _ outcome: AuditOutcome, account: String? = nil, detail: String? = nil) throws {
        guard let audit else { return }
        func appendOnce() throws {
            _ = try audit.appending {
                try $0.append(event, outcome: outcome, backend: backend.kind, account: account, detail: detail)
            }
        }
        do {
            do {
                try appendOnce()
            } catch let error as LatchkeyError where error.code == .tampered {
                guard try repairTrail(before: event) else { throw error }
                try appendOnce()
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

    /// Repairs, visibly, a trail of the store in use that cannot be continued, where
    /// that is a repair and not a cover-up: when the Secret Service provider kept the trail
    /// key's item without its value (kwalletd5 stopped within 5 s of a change keeps what it
    /// had not saved that way), or before a `wipe`, which erases the namespace and must
    /// always run. The trail is reset (``AuditTrail/reset()``: the old segment kept beside
    /// it, a new chain whose `audit.reset` entry says why). A key deleted, or a trail cut or
    /// edited, is not repaired here: that stays `.tampered` until ``resetAuditTrail()``.
    /// - Parameter event: The operation about to run.
    /// - Returns: Whether the trail was reset.
    /// - Throws: `LatchkeyError` when the store or a file cannot answer.
    func repairTrail(before event: AuditEvent) throws -> Bool {
        guard let trail = auditTrail else { return false }
        let lost = try store.secretService?.damagedItems(kind: .key).contains { $0.name == trail.keyItem.name } ?? false
        let cause: String
        if lost {
            cause = Self.lostTrailKeyCause
        } else if event == .wipe {
            cause = "reset before a wipe, which always runs"
        } else {
            return false
        }
        return try trail.reset(cause: cause) != nil
    }

    /// Why a trail was reset when the provider lost its key's value.
    static let lostTrailKeyCause =
        "the Secret Service provider lost the audit key's value (it kept the item without it)"

    /// Before a wipe, which must always run: removes the key items the Secret Service
    /// provider lost (kept without their values; a lost pseudonym key would stop every
    /// write, a new trail key's included, and the wipe removes them anyway, finding the
    /// items stored under them by their payload), and resets the trail when its key was
    /// among them, so a process that still holds that key (the agent) does not go on
    /// with a key no other process can read.
    func dropLostKeysBeforeWipe() throws {
        guard let service = store.secretService else { return }
        let lost = try service.damagedItems(kind: .key)
        guard !lost.isEmpty else { return }
        try service.deleteDamaged(kind: .key)
        if let trail = auditTrail, lost.contains(where: { $0.name == trail.keyItem.name }) {
            _ = try trail.reset(cause: Self.lostTrailKeyCause)
        }
    }

    /// Keeps, for ``auditWarnings``, that `event`'s entry could not be written (`audit.onFailure` `warn`).
    func keepAuditWarning(_ error: LatchkeyError, missing event: AuditEvent) {
        droppedAuditEntries.withLock {
            $0.append(LatchkeyError(error.code, "the \(event) entry is missing from the audit trail: \(error.message)"))
        }
    }

    /// The audit entries this vault could not write, oldest first: those it let pass
    /// because the policy's `audit.onFailure` is `warn` (under `fail` such an operation
    /// throws instead), and, under either, a step of opening that was left for a later
    /// open because the trail could not record it (a broken trail: the migration, the
    /// return of the Secret Service, an interrupted deletion's end). Show them to the user.
    public var auditWarnings: [LatchkeyError] {
        droppedAuditEntries.withLock { $0 }
    }

    /// The audit entries of every trail of this namespace (the store in use, and
    /// the encrypted file's when the Secret Service is in use), oldest first.
    /// - Parameter sequence: Only entries after this sequence number (of each trail).
    /// - Returns: The entries, merged by time.
    /// - Throws: `LatchkeyError` when a trail cannot be read.
    public func auditEntries(since sequence: UInt64? = nil) throws -> [AuditEntry] {
        beginOperation()
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
        beginOperation()
        return try auditTrails.flatMap { try $0.resets() }.sorted { $0.time < $1.time }
    }

    /// Verifies every trail of this namespace, without changing anything.
    /// - Returns: Each trail's path and verdict.
    /// - Throws: `LatchkeyError` when a trail or its key cannot be read.
    public func verifyAudit() throws -> [AuditTrailVerification] {
        beginOperation()
        return try auditTrails.map { AuditTrailVerification(path: $0.path, verification: try $0.verify()) }
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
        beginOperation()
        return try auditTrails.compactMap { try $0.reset() }
    }

    private var auditTrails: [any AuditLog] {
        [audit, fileAudit].compactMap { $0 }
    }
}
