extension Vault {
    static let usernameItem = ItemKey(kind: .username, name: "last")
    static let rememberSetting = ItemKey(kind: .setting, name: "rememberUsername")

    /// The username remembered by the last login, for prefilling a login screen.
    ///
    /// The username group: ``rememberUsername(_:)-9cng2`` keeps it,
    /// ``forgetUsername()-7idtj`` drops it, and the user's opt-out is
    /// ``isUsernameMemoryAllowed()-4jzlu`` and ``setUsernameMemoryAllowed(_:)-6mui7``.
    /// - Returns: The username, or nil when none is remembered.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func lastUsername() throws -> String? {
        beginOperation()
        return try rememberedUsername()
    }

    /// `lastUsername()` within an operation.
    func rememberedUsername() throws -> String? {
        guard let item = try backend.read(Vault.usernameItem) else { return nil }
        guard let username = item.value.utf8String() else {
            throw LatchkeyError(.tampered, "the remembered username is not valid UTF-8")
        }
        return username
    }

    /// Remembers `username` for the next login, unless the policy forbids it or
    /// the user opted out; a skipped remember is audited with the reason.
    /// - Parameter username: The username that just logged in.
    /// - Returns: ``PolicyDecision/allow`` when it was remembered, else the denial saying why.
    /// - Throws: `LatchkeyError` `.invalidInput` for an empty username; store and audit errors.
    @discardableResult
    public func rememberUsername(_ username: String) throws -> PolicyDecision {
        beginOperation()
        guard !username.isEmpty else { throw LatchkeyError(.invalidInput, "the username is empty") }
        return try perform(.usernameRemembered, account: username) { changes in
            let decision = policy.rememberUsernameDecision(userOptedOut: !(try usernameMemorySetting()))
            guard decision.isAllowed else {
                // The policy's own refusal is a denial; the user's opt-out a skip.
                return policy.remembersUsernames
                    ? OperationOutcome(decision, .skipped, event: .usernameSkipped, detail: decision.reason)
                    : OperationOutcome(decision, .denied, event: .policyDenied, detail: decision.reason)
            }
            try changes.willChange(Vault.usernameItem, in: backend)
            try backend.write(StoredItem(value: SecretBytes(utf8: username)), for: Vault.usernameItem)
            return OperationOutcome(.allow)
        }
    }

    /// Forgets the remembered username, if any.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func forgetUsername() throws {
        beginOperation()
        try perform(.usernameForgotten) { changes in
            let previous = try rememberedUsername()
            try deleteEverywhere(Vault.usernameItem, changes: changes)
            return OperationOutcome((), account: previous)
        }
    }

    /// Whether the user allows remembering the username (the opt-out setting,
    /// on until turned off). The policy may still forbid it.
    /// - Returns: The user's setting.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func isUsernameMemoryAllowed() throws -> Bool {
        beginOperation()
        return try usernameMemorySetting()
    }

    /// `isUsernameMemoryAllowed()` within an operation.
    func usernameMemorySetting() throws -> Bool {
        try backend.read(Vault.rememberSetting)?.value != SecretBytes(utf8: "off")
    }

    /// Sets the user's choice. Turning it off erases the remembered username at
    /// once; while it is off, ``rememberUsername(_:)-9cng2`` is skipped.
    ///
    /// What the opt-out erases is the remembered username item alone, the one
    /// that prefills the login screen. It does not log anyone out: a live session
    /// keeps the account it was saved under (its address in the store, and a
    /// keyed pseudonym in the audit trail), so the app can still tell who is
    /// logged in (``activeAccount()-7gtpg``) until that session is logged out, wiped or
    /// expires.
    /// - Parameter allowed: The user's choice: whether usernames may be remembered.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func setUsernameMemoryAllowed(_ allowed: Bool) throws {
        beginOperation()
        let event: AuditEvent = allowed ? .rememberEnabled : .rememberDisabled
        try perform(event) { changes in
            try changes.willChange(Vault.rememberSetting, in: backend)
            try backend.write(
                StoredItem(value: SecretBytes(utf8: allowed ? "on" : "off")), for: Vault.rememberSetting)
            if !allowed {
                try deleteEverywhere(Vault.usernameItem, changes: changes)
            }
            return OperationOutcome((), detail: allowed ? nil : "remembered username erased")
        }
    }
}
