#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Vault {
    /// Saves a session token, replacing one with the same account and name. Its
    /// life is capped by the policy's `sessions.maxAgeSeconds`.
    /// - Parameters:
    ///   - token: The token.
    ///   - name: Its name, such as `access` or `refresh`.
    ///   - account: The account it belongs to.
    ///   - expires: When the server says it expires; the policy's cap applies either way.
    /// - Returns: The expiry actually stored.
    /// - Throws: `LatchkeyError` `.invalidInput` for an empty name, a name or
    ///   account longer than 255 UTF-8 bytes, or an expiry that is not in the future
    ///   (a token that has already expired is refused rather than stored dead), or a
    ///   token that begins with the marker of a grant record; `.timedOut` when a refresh
    ///   of the namespace kept settling for longer than 30 s; store and audit errors.
    @discardableResult
    public func saveSession(_ token: SecretBytes, name: String, account: String, expires: Date? = nil) throws -> Date {
        beginOperation()
        guard !name.isEmpty else { throw LatchkeyError(.invalidInput, "the session name is empty") }
        let now = clock.now()
        try Vault.refusePastExpiry(expires, of: "session '\(name)'", now: now)
        guard !GrantRecord.isGrant(token) else {
            throw LatchkeyError(
                .invalidInput,
                "session '\(name)' begins with the bytes that mark a grant record (a zero byte, then \"latchkey.grant\"); save a grant with saveGrant; nothing was stored"
            )
        }
        let expiry = policy.sessionExpiry(requested: expires, created: now)
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        return try performCommitting(.sessionSaved, account: account, detail: name) { changes in
            try changes.willChange(key, in: backend)
            try backend.write(StoredItem(value: token, created: now, expires: expiry), for: key)
            return OperationOutcome(expiry)
        }
    }

    /// Reads a session token. An expired session is never returned: reading it
    /// deletes it and audits `session.expired`. A session holding a grant
    /// (``saveGrant(_:name:account:)-6ntoj``) reads as its access token while that is
    /// valid, and as nil (kept for a refresh) once it has expired.
    /// - Parameters:
    ///   - name: The token's name.
    ///   - account: The account.
    /// - Returns: The session, or nil when there is none or it expired.
    /// - Throws: `LatchkeyError` when the store cannot answer; `.invalidInput` for a name or account over 255 bytes.
    public func session(named name: String, account: String) throws -> Session? {
        beginOperation()
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        return try perform(.sessionRead, account: account, detail: name) { changes in
            guard let item = try backend.read(key) else { return .unrecorded(nil) }
            if item.isExpired(at: clock.now()) {
                try deleteEverywhere(key, changes: changes)
                return OperationOutcome(nil, event: .sessionExpired)
            }
            guard GrantRecord.isGrant(item.value) else { return OperationOutcome(Session(key, item)) }
            // A grant reads as its access token, while that is valid; the grant
            // itself stays for a refresh (`accessToken(named:account:deadline:refresher:)`).
            let grant = try GrantRecord.decode(item.value)
            if let expires = grant.accessTokenExpires, expires <= grantClock() { return OperationOutcome(nil) }
            return OperationOutcome(
                Session(
                    account: key.account, name: key.name, value: grant.accessToken, created: item.created,
                    expires: grant.accessTokenExpires ?? item.expires))
        }
    }

    /// Reads a session that holds Latchkey's own bookkeeping rather than a
    /// credential (the git helper's per-host index of usernames, paths and git's
    /// expiries), without an audit entry: like ``sessions(account:)``, it tells
    /// what is stored, not a secret. Credentials are read with
    /// ``session(named:account:)-k6m0``, which is audited. An expired session reads as
    /// nil and is left for the next audited read or listing to delete.
    /// - Parameters:
    ///   - name: The session's name.
    ///   - account: The account.
    /// - Returns: The session, or nil when there is none or it expired.
    /// - Throws: `LatchkeyError` when the store cannot answer; `.invalidInput` for a name or account over 255 bytes.
    package func bookkeepingSession(named name: String, account: String) throws -> Session? {
        beginOperation()
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        guard let item = try backend.read(key), !item.isExpired(at: clock.now()) else { return nil }
        return Session(key, item)
    }

    /// Lists the sessions that have not expired (expired ones are deleted and audited).
    /// - Parameter account: Only this account's sessions; all when nil.
    /// - Returns: The sessions without their tokens, by account and name.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func sessions(account: String? = nil) throws -> [SessionInfo] {
        beginOperation()
        return try liveSessions(account: account)
    }

    /// `sessions(account:)` within an operation.
    private func liveSessions(account: String?) throws -> [SessionInfo] {
        var result: [SessionInfo] = []
        for key in try backend.list(kind: .session) where account == nil || key.account == account {
            guard let item = try backend.read(key), !(try expire(item, key: key)) else { continue }
            result.append(
                SessionInfo(account: key.account, name: key.name, created: item.created, expires: item.expires))
        }
        return result.sorted { ($0.account, $0.name) < ($1.account, $1.name) }
    }

    /// The account of the newest live session (by when it was saved): who is
    /// logged in, whether or not the username is remembered. Every account
    /// counts alike, the empty one too. Expired sessions are deleted and audited on
    /// the way, as ``sessions(account:)-8tdfp`` does.
    /// - Returns: The account, or nil when no session is live.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func activeAccount() throws -> String? {
        beginOperation()
        return try liveSessions(account: nil).max { $0.created < $1.created }?.account
    }

    /// Deletes a session; deleting one that does not exist succeeds.
    /// - Parameters:
    ///   - name: The token's name.
    ///   - account: The account.
    /// - Returns: Whether a session was there.
    /// - Throws: `LatchkeyError` when the store cannot answer; `.invalidInput` for a name or account over 255 bytes;
    ///   `.timedOut` when a refresh of the namespace kept settling for longer than 30 s (nothing was deleted).
    @discardableResult
    public func deleteSession(named name: String, account: String) throws -> Bool {
        beginOperation()
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        return try performCommitting(.sessionDeleted, account: account, detail: name) { changes in
            let existed = try backend.read(key) != nil
            try deleteEverywhere(key, changes: changes)
            return OperationOutcome(existed, existed ? .ok : .skipped)
        }
    }

    /// Deletes `item` and audits `session.expired` when it has expired.
    /// - Returns: Whether it had expired.
    private func expire(_ item: StoredItem, key: ItemKey) throws -> Bool {
        guard item.isExpired(at: clock.now()) else { return false }
        return try perform(.sessionExpired, account: key.account, detail: key.name) { changes in
            try deleteEverywhere(key, changes: changes)
            return OperationOutcome(true)
        }
    }
}
