extension Vault {
    /// Logs out: applies the policy's `onLogout` (wipe or keep the account's
    /// sessions; keep or forget the remembered username) and `secrets.onLogout`
    /// (keep or wipe the app's named secrets, whichever account logs out), in the
    /// store in use and in a leftover file vault from an earlier fallback.
    /// - Parameter account: The account logging out; all accounts when nil.
    /// - Returns: What was wiped and what was kept.
    /// - Throws: `LatchkeyError` when a store cannot answer, nothing being reported
    ///   as wiped that was not; `.timedOut` when a refresh of the namespace kept
    ///   settling for longer than 30 s (`docs/ROTATION.md`; nothing was deleted).
    @discardableResult
    public func logout(account: String? = nil) throws -> LogoutReport {
        beginOperation()
        return try performCommitting(.logout, account: account) { changes in
            var report = LogoutReport()
            var covered: [MigrationTombstones.Pattern] = []
            if policy.sessionsOnLogout == .wipe { covered.append(.init(kind: .session, account: account)) }
            if policy.secretsOnLogout == .wipe { covered.append(.init(kind: .secret)) }
            if policy.usernameOnLogout == .forget || !policy.remembersUsernames {
                covered.append(.item(Vault.usernameItem))
            }
            try recordTombstones(covered)
            for held in try storesHoldingCredentials {
                let store = held.backend
                let sessions = try store.list(kind: .session).filter { account == nil || $0.account == account }
                var doomed = policy.sessionsOnLogout == .wipe ? sessions : []
                report.keptSessions += sessions.count - doomed.count
                let secrets = try store.list(kind: .secret)
                if policy.secretsOnLogout == .wipe { doomed += secrets } else { report.keptSecrets += secrets.count }
                let forgets = policy.usernameOnLogout == .forget || !policy.remembersUsernames
                if try store.read(Vault.usernameItem) != nil {
                    if forgets { doomed.append(Vault.usernameItem) } else { report.keptUsername = true }
                }
                for key in doomed { try changes.willChange(key, in: store) }
                try deleteRecoverably(doomed, from: held, for: .logout, changes: changes)
                if policy.sessionsOnLogout == .wipe, let service = held.secretService {
                    report.removedDamagedItems += try service.deleteDamaged(kind: .session, account: account)
                }
                report.wipedSessions += doomed.filter { $0.kind == .session }
                report.wipedSecrets += doomed.filter { $0.kind == .secret }
                report.forgotUsername = report.forgotUsername || doomed.contains(Vault.usernameItem)
            }
            if policy.sessionsOnLogout == .wipe {
                try forgetPendingRotations(removingEmptyVault: false) { account == nil || $0.account == account }
            }
            return OperationOutcome(report, detail: report.summary)
        }
    }

    /// Erases every credential of the namespace: all sessions, named secrets and the
    /// remembered username in the store in use, and a leftover file vault
    /// entirely (with its key). When the encrypted file is the store in use, its
    /// vault and key are destroyed too and a new one keeps only the user's
    /// opt-out setting, which always stays. Idempotent.
    /// - Returns: What was wiped.
    /// - Throws: `LatchkeyError` `.timedOut` when a refresh of the namespace kept
    ///   settling for longer than 30 s (nothing was wiped); when a store cannot answer.
    @discardableResult
    public func wipe() throws -> LogoutReport {
        beginOperation()
        try dropLostKeysBeforeWipe()
        return try performCommitting(.wipe) { changes in
            var report = LogoutReport()
            if backend.kind == .file, let fileVault {
                // One change: the sessions and the username go in the same atomic
                // rewrite that destroys the key, and the opt-out stays in it, so no
                // crash and no second wipe at the same time can turn it back on.
                try changes.willChangeEverything(in: fileVault)
                let removed = try fileVault.wipe { $0 == Vault.rememberSetting }
                report.wipedSessions = removed.filter { $0.kind == .session }
                report.wipedSecrets = removed.filter { $0.kind == .secret }
                report.forgotUsername = removed.contains(Vault.usernameItem)
                try forgetPendingRotations(removingEmptyVault: true) { _ in true }
                return OperationOutcome(report, detail: report.summary)
            }
            // The Secret Service: the opt-out setting is never deleted (unless the provider
            // lost it: items whose payload cannot be read go first, a lost pseudonym key among them).
            try recordTombstones([.everything])
            report.removedDamagedItems = try store.secretService?.deleteDamaged() ?? 0
            var doomed = try backend.list(kind: .session) + backend.list(kind: .secret)
            if try backend.read(Vault.usernameItem) != nil { doomed.append(Vault.usernameItem) }
            for key in doomed { try changes.willChange(key, in: backend) }
            try deleteRecoverably(doomed, from: store, for: .wipe, changes: changes)
            report.wipedSessions = doomed.filter { $0.kind == .session }
            report.wipedSecrets = doomed.filter { $0.kind == .secret }
            report.forgotUsername = doomed.contains(Vault.usernameItem)
            if let fileVault, try fileVaultExists() {
                try changes.willChangeEverything(in: fileVault)
                try fileVault.deleteAll()
                try tombstones.destroy()
                report.wipedLeftoverFileVault = true
            }
            try forgetPendingRotations(removingEmptyVault: true) { _ in true }
            return OperationOutcome(report, detail: report.summary)
        }
    }

    /// Applies the policy's `sessions.wipeOnExit`: call it when the app exits.
    /// Under a policy that wipes on exit (a shared device), every session is
    /// deleted; otherwise nothing happens.
    /// - Returns: What was wiped.
    /// - Throws: `LatchkeyError` `.timedOut` when a refresh of the namespace kept
    ///   settling for longer than 30 s (nothing was wiped); when the store cannot answer.
    @discardableResult
    public func applyExitPolicy() throws -> LogoutReport {
        beginOperation()
        guard policy.wipesSessionsOnExit else { return LogoutReport() }
        return try performCommitting(.wipe, detail: "app exit") { changes in
            var report = LogoutReport()
            try recordTombstones([.init(kind: .session)])
            for held in try storesHoldingCredentials {
                let store = held.backend
                for key in try store.list(kind: .session) {
                    try changes.willChange(key, in: store)
                    try store.delete(key)
                    report.wipedSessions.append(key)
                }
            }
            try forgetPendingRotations(removingEmptyVault: true) { _ in true }
            return OperationOutcome(report, detail: "app exit: " + report.summary)
        }
    }

    /// The store in use, and a leftover file vault that can be opened.
    var storesHoldingCredentials: [Store] {
        get throws {
            guard let fileVault, store.kind != .file, try fileVaultExists() else { return [store] }
            return [store, .file(fileVault)]
        }
    }
}
