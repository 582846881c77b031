extension Vault {
    /// Logs out: applies the policy's `onLogout` (wipe or keep the account's
    /// sessions; keep or forget the remembered username), in the store in use
    /// and in a leftover file vault from an earlier fallback.
    /// - Parameter account: The account logging out; all accounts when nil.
    /// - Returns: What was wiped and what was kept.
    /// - Throws: `LatchkeyError` when a store cannot answer; nothing is reported
    ///   as wiped that was not.
    @discardableResult
    public func logout(account: String? = nil) throws -> LogoutReport {
        try perform(.logout, account: account) { changes in
            var report = LogoutReport()
            for store in try storesHoldingCredentials {
                for key in try store.list(kind: .session) where account == nil || key.account == account {
                    if policy.sessionsOnLogout == .wipe {
                        try changes.willChange(key, in: store)
                        try store.delete(key)
                        report.wipedSessions.append(key)
                    } else {
                        report.keptSessions += 1
                    }
                }
                if policy.usernameOnLogout == .forget || !policy.remembersUsernames, try store.read(Vault.usernameItem) != nil {
                    try changes.willChange(Vault.usernameItem, in: store)
                    try store.delete(Vault.usernameItem)
                    report.forgotUsername = true
                }
            }
            return OperationOutcome(report, detail: report.summary)
        }
    }

    /// Erases every credential of the namespace: all sessions and the
    /// remembered username in the store in use, and a leftover file vault
    /// entirely (with its key). When the encrypted file is the store in use, its
    /// vault and key are destroyed too and a new one keeps only the user's
    /// opt-out setting, which always stays. Idempotent.
    /// - Returns: What was wiped.
    /// - Throws: `LatchkeyError` when a store cannot answer.
    @discardableResult
    public func wipe() throws -> LogoutReport {
        try perform(.wipe) { changes in
            var report = LogoutReport()
            for key in try backend.list(kind: .session) {
                try changes.willChange(key, in: backend)
                try backend.delete(key)
                report.wipedSessions.append(key)
            }
            if try backend.read(Vault.usernameItem) != nil {
                try changes.willChange(Vault.usernameItem, in: backend)
                try backend.delete(Vault.usernameItem)
                report.forgotUsername = true
            }
            if let fileVault, try fileVaultExists() {
                try changes.willChangeEverything(in: fileVault)
                if backend.kind == .file {
                    // Destroy the vault and its key, so copies of the old ciphertext a
                    // journaling file system keeps are useless; only the opt-out stays.
                    let setting = try fileVault.read(Vault.rememberSetting)
                    try fileVault.deleteAll()
                    if let setting { try fileVault.write(setting, for: Vault.rememberSetting) }
                } else {
                    try fileVault.deleteAll()
                    report.wipedLeftoverFileVault = true
                }
            }
            return OperationOutcome(report, detail: report.summary)
        }
    }

    /// Applies the policy's `sessions.wipeOnExit`: call it when the app exits.
    /// Under a policy that wipes on exit (a shared device), every session is
    /// deleted; otherwise nothing happens.
    /// - Returns: What was wiped.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    @discardableResult
    public func applyExitPolicy() throws -> LogoutReport {
        guard policy.wipesSessionsOnExit else { return LogoutReport() }
        return try perform(.wipe, detail: "app exit") { changes in
            var report = LogoutReport()
            for store in try storesHoldingCredentials {
                for key in try store.list(kind: .session) {
                    try changes.willChange(key, in: store)
                    try store.delete(key)
                    report.wipedSessions.append(key)
                }
            }
            return OperationOutcome(report, detail: "app exit: " + report.summary)
        }
    }

    /// The store in use, and a leftover file vault that can be opened.
    var storesHoldingCredentials: [any CredentialBackend] {
        get throws {
            guard let fileVault, backend.kind != .file, try fileVaultExists() else { return [backend] }
            return [backend, fileVault]
        }
    }
}
