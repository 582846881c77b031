#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Vault {
    /// Saves a named secret of the app, such as an API key, a client secret or
    /// a certificate's password, replacing one with the same name. A named secret
    /// belongs to the app, not to an account; the session cap
    /// (`sessions.maxAgeSeconds`) does not apply, only the policy's
    /// `secrets.maxAgeSeconds` when it sets one (by default a secret lives until it
    /// is deleted or wiped), and `secrets.onLogout` decides whether a logout wipes it.
    /// - Parameters:
    ///   - value: The secret.
    ///   - name: Its name, such as `api-key`.
    ///   - expires: When it stops being valid, if it ever does; the policy's
    ///     `secrets.maxAgeSeconds` caps it when set.
    /// - Returns: The expiry actually stored; nil when the secret does not expire.
    /// - Throws: `LatchkeyError` `.invalidInput` for an empty name, a name longer
    ///   than 255 UTF-8 bytes, or an expiry that is not in the future; store and audit errors.
    @discardableResult
    public func saveSecret(_ value: SecretBytes, named name: String, expires: Date? = nil) throws -> Date? {
        try saveSecret(value, named: name, expires: expires, auditDetail: name)
    }

    /// ``saveSecret(_:named:expires:)`` audited with `auditDetail` (non-secret text) as its
    /// entry's detail in place of the name: the Secret Service provider records who called.
    @discardableResult
    package func saveSecret(_ value: SecretBytes, named name: String, expires: Date? = nil, auditDetail: String)
        throws -> Date?
    {
        beginOperation()
        let key = try Vault.secretKey(name)
        let now = clock.now()
        try Vault.refusePastExpiry(expires, of: "secret '\(name)'", now: now)
        let expiry = policy.secretExpiry(requested: expires, created: now)
        return try perform(.secretSaved, detail: auditDetail) { changes in
            try changes.willChange(key, in: backend)
            try backend.write(StoredItem(value: value, created: now, expires: expiry), for: key)
            return OperationOutcome(expiry)
        }
    }

    /// Reads a named secret. An expired one is never returned: reading it
    /// deletes it and audits `secret.expired`.
    /// - Parameter name: The secret's name.
    /// - Returns: The secret, or nil when there is none or it expired.
    /// - Throws: `LatchkeyError` when the store cannot answer; `.invalidInput` for an empty name or one over 255 bytes.
    public func secret(named name: String) throws -> NamedSecret? {
        try secret(named: name, auditDetail: name)
    }

    /// ``secret(named:)`` audited with `auditDetail` (non-secret text) as its entry's detail.
    package func secret(named name: String, auditDetail: String) throws -> NamedSecret? {
        beginOperation()
        let key = try Vault.secretKey(name)
        return try perform(.secretRead, detail: auditDetail) { changes in
            guard let item = try backend.read(key) else { return .unrecorded(nil) }
            if item.isExpired(at: clock.now()) {
                try deleteEverywhere(key, changes: changes)
                return OperationOutcome(nil, event: .secretExpired)
            }
            return OperationOutcome(
                NamedSecret(name: name, value: item.value, created: item.created, expires: item.expires))
        }
    }

    /// Lists the named secrets that have not expired (expired ones are deleted
    /// and audited as `secret.expired`), without their values.
    /// - Returns: Names and times, by name.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func secrets() throws -> [SecretInfo] {
        beginOperation()
        var result: [SecretInfo] = []
        for key in try backend.list(kind: .secret) {
            guard let item = try backend.read(key) else { continue }
            if item.isExpired(at: clock.now()) {
                _ = try perform(.secretExpired, detail: key.name) { changes in
                    try deleteEverywhere(key, changes: changes)
                    return OperationOutcome(())
                }
                continue
            }
            result.append(SecretInfo(name: key.name, created: item.created, expires: item.expires))
        }
        return result.sorted { $0.name < $1.name }
    }

    /// Deletes a named secret; deleting one that does not exist succeeds.
    /// - Parameter name: The secret's name.
    /// - Returns: Whether a secret was there.
    /// - Throws: `LatchkeyError` when the store cannot answer; `.invalidInput` for an empty name or one over 255 bytes.
    @discardableResult
    public func deleteSecret(named name: String) throws -> Bool {
        try deleteSecret(named: name, auditDetail: name)
    }

    /// ``deleteSecret(named:)`` audited with `auditDetail` (non-secret text) as its entry's detail.
    @discardableResult
    package func deleteSecret(named name: String, auditDetail: String) throws -> Bool {
        beginOperation()
        let key = try Vault.secretKey(name)
        return try perform(.secretDeleted, detail: auditDetail) { changes in
            let existed = try backend.read(key) != nil
            try deleteEverywhere(key, changes: changes)
            return OperationOutcome(existed, existed ? .ok : .skipped)
        }
    }

    /// Every named secret that has not expired, with its value, read as one operation audited
    /// by one `secret.read` entry with `auditDetail`: the Secret Service provider loading its
    /// index, which is no client's read. An expired secret is left out (and left in place).
    package func allSecrets(auditDetail: String) throws -> [NamedSecret] {
        beginOperation()
        return try perform(.secretRead, detail: auditDetail) { _ in
            var result: [NamedSecret] = []
            for key in try backend.list(kind: .secret) {
                guard let item = try backend.read(key), !item.isExpired(at: clock.now()) else { continue }
                result.append(
                    NamedSecret(name: key.name, value: item.value, created: item.created, expires: item.expires))
            }
            return OperationOutcome(result)
        }
    }

    /// Rewrites the named secret `name` with what `change` makes of its value, as one
    /// operation audited by one `secret.saved` entry with `auditDetail` (the Secret Service
    /// provider changing an item's label or attributes, kept in the same record as its secret).
    /// Its times are kept.
    /// - Returns: Whether there was such a secret (nothing is written or recorded when there was none).
    @discardableResult
    package func updateSecret(named name: String, auditDetail: String, _ change: (SecretBytes) throws -> SecretBytes)
        throws -> Bool
    {
        beginOperation()
        let key = try Vault.secretKey(name)
        return try perform(.secretSaved, detail: auditDetail) { changes in
            guard let item = try backend.read(key) else { return .unrecorded(false) }
            let value = try change(item.value)
            try changes.willChange(key, in: backend)
            try backend.write(StoredItem(value: value, created: item.created, expires: item.expires), for: key)
            return OperationOutcome(true)
        }
    }

    /// Records `event` with `auditDetail` for something the app did outside the vault (the
    /// Secret Service provider's items kept in memory), before the app does it: under
    /// `audit.onFailure` `fail` an entry that cannot be written throws, and the app does nothing.
    package func recordOutsideVault(_ event: AuditEvent, auditDetail: String) throws {
        beginOperation()
        try perform(event, detail: auditDetail) { _ in OperationOutcome(()) }
    }

    /// The item of the named secret `name`, its name checked.
    private static func secretKey(_ name: String) throws -> ItemKey {
        guard !name.isEmpty else { throw LatchkeyError(.invalidInput, "the secret name is empty") }
        let key = ItemKey(kind: .secret, name: name)
        try key.requireNameLengths()
        return key
    }

    /// Refuses an expiry that has passed: a credential that is already dead is not stored.
    static func refusePastExpiry(_ expires: Date?, of what: String, now: Date) throws {
        if let expires, expires <= now {
            throw LatchkeyError(
                .invalidInput, "\(what) expires at \(expires.formatted(.iso8601)), which has passed; nothing was stored"
            )
        }
    }
}
