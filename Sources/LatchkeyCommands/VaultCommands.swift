import Latchkey

/// `status`, `username`, `remember`, `logout`, `wipe`, `migrate`.
enum VaultCommands {
    static func status(_ context: StoreContext, origins: SettingOrigins) throws {
        let vault: Vault
        let status: VaultStatus
        let started = ContinuousClock.now
        do {
            // status reports; it never raises the keyring's unlock prompt.
            vault = try context.openVault(unlocking: false)
            status = try vault.status()
        } catch let error as LatchkeyError
            where [.locked, .timedOut, .io, .unavailable].contains(error.code)
            && (try? context.backendChoice()) != .file
        {
            try unusableSecretService(context, error, started: started)
            throw error
        }
        // The command line opens stores in a directory only; a vault kept in memory is a test's.
        let directory = status.storeDirectory ?? ""
        let settings = try context.settings(policy: vault.policy, storeDirectory: directory, origins: origins)
        let out = context.output
        let accounts = status.accountCount == 1 ? "1 account" : "\(status.accountCount) accounts"
        try out.line("app: \(status.appID) (\(settings.app.provenance))")
        try out.line("backend: \(status.backend)")
        try out.line("backend choice: \(settings.backend.value) (\(settings.backend.provenance))")
        try out.line("why: \(status.reason)")
        try out.line("protection: \(status.protection)")
        try out.line("policy: \(status.policyName) (\(settings.policy.provenance))")
        try out.line(
            "store directory: \(TextEscaping.escaped(directory)) (\(settings.storeDirectory.provenance))")
        let awaiting = status.leftoverFileVault && vault.openReport.migration?.awaitingVerification == true
        if let path = status.fileVaultPath {
            let note =
                awaiting
                ? " (migrated; kept until a later open, in another process at least 10 s after the copy, reads every item back)"
                : status.leftoverFileVault ? " (left over from a fallback; `latchkey migrate` moves it)" : ""
            try out.line("vault file: \(path)\(note)")
        }
        try out.line(
            "remember username: \(status.usernameMemoryAllowed ? "on" : "off"); a username is \(status.usernameRemembered ? "" : "not ")remembered"
        )
        try out.line("sessions: \(status.sessionCount) in \(accounts)")
        try out.line("named secrets: \(status.secretCount)")
        if status.damagedItemCount > 0 {
            try out.line(
                "damaged: \(status.damagedItemCount) item\(status.damagedItemCount == 1 ? "" : "s") whose value the Secret Service lost (`latchkey session list` names the sessions; `latchkey logout` or `latchkey wipe --yes` removes them)"
            )
        }
        if status.pendingRotationCount > 0 {
            try out.line(
                "pending rotations: \(status.pendingRotationCount) rotated grant\(status.pendingRotationCount == 1 ? "" : "s") whose save failed, kept in pending.vault until the next refresh of the session saves it (a key-file vault, under every policy: protects against copies of that file alone)"
            )
        }
        if status.backend == .secretService {
            let unlock = context.unlockMode(vault.policy)
            try out.line("unlock: \(unlock.mode.rawValue) (\(unlock.why))")
            out.set("unlock", .string(unlock.mode.rawValue))
        }
        try out.line("audit trails: \(status.auditTrails.isEmpty ? "off" : status.auditTrails.joined(separator: ", "))")
        try secretServiceProvider(context, policy: vault.policy, started: started)
        out.set("app", .string(status.appID.rawValue))
        out.set("backend", .string(status.backend.rawValue))
        out.set("reason", .string(status.reason))
        out.set("protection", .string(status.protection))
        out.set("policy", .object([("name", .string(status.policyName)), ("source", .string(status.policySource))]))
        out.set("storeDirectory", .string(directory))
        out.set("fileVault", .string(status.fileVaultPath))
        out.set("leftoverFileVault", .bool(status.leftoverFileVault))
        out.set("migrationAwaitingVerification", .bool(awaiting))
        out.set("remembersUsername", .bool(status.usernameMemoryAllowed))
        out.set("usernameRemembered", .bool(status.usernameRemembered))
        out.set("sessions", .integer(status.sessionCount))
        out.set("accounts", .integer(status.accountCount))
        out.set("secrets", .integer(status.secretCount))
        out.set("damagedItems", .integer(status.damagedItemCount))
        out.set("pendingRotations", .integer(status.pendingRotationCount))
        out.set("auditTrails", .array(status.auditTrails.map { .string($0) }))
        out.set(
            "settings",
            .object(
                settings.all.map { key, setting in
                    (
                        key,
                        .object([
                            ("value", .string(setting.value)), ("source", .string(setting.source.rawValue)),
                            ("origin", .string(setting.origin)),
                        ])
                    )
                }))
    }

    static func usernameGet(_ context: StoreContext) throws {
        guard let username = try context.openVault().lastUsername() else {
            throw LatchkeyError(.notFound, "no username is remembered")
        }
        try context.output.line(username)
        context.output.set("username", .string(username))
    }

    static func usernameSet(_ context: StoreContext, name: String) throws {
        let vault = try context.openVault()
        try vault.rememberUsername(name).requireAllowed()
        try context.output.line("remembered the username")
        context.output.set("remembered", .bool(true))
        context.noteFallback(vault, wrote: "the username")
    }

    static func usernameForget(_ context: StoreContext) throws {
        try context.openVault().forgetUsername()
        try context.output.line("forgot the remembered username")
        context.output.set("forgotten", .bool(true))
    }

    static func setRemember(_ remembers: Bool, _ context: StoreContext) throws {
        try context.openVault().setUsernameMemoryAllowed(remembers)
        try context.output.line(
            remembers
                ? "remembering the username is on"
                : "remembering the username is off; the remembered username was erased")
        context.output.set("remember", .bool(remembers))
    }

    static func rememberShow(_ context: StoreContext) throws {
        let vault = try context.openVault()
        let remembers = try vault.isUsernameMemoryAllowed()
        let policyAllows = vault.policy.remembersUsernames
        try context.output.line(
            "\(remembers ? "on" : "off")\(policyAllows ? "" : " (but policy '\(vault.policy.name)' never remembers usernames)")"
        )
        context.output.set("remember", .bool(remembers))
        context.output.set("policyAllows", .bool(policyAllows))
    }

    static func logout(_ context: StoreContext, account: String?) throws {
        let report = try context.openVault().logout(account: account)
        let summary = report.summary
        try context.output.line(
            TextEscaping.escaped("logged out \(account == nil ? "every account" : "the account given"): \(summary)"))
        setReport(report, summary: summary, context.output)
    }

    static func wipe(_ context: StoreContext, confirmed: Bool) throws {
        let appID = try context.appID()
        guard confirmed else {
            try context.output.line("cancelled: nothing was wiped")
            context.output.set("wiped", .bool(false))
            return
        }
        let report = try context.openVault().wipe()
        let summary = report.summary
        try context.output.line(TextEscaping.escaped("wiped \(appID): \(summary)"))
        context.output.set("wiped", .bool(true))
        setReport(report, summary: summary, context.output)
    }

    static func migrate(_ context: StoreContext) throws {
        let report = try context.openVault().migrate()
        try context.output.line(TextEscaping.escaped(report.summary))
        context.output.set("moved", .integer(report.moved))
        context.output.set("keptNewer", .integer(report.keptNewer))
        context.output.set("droppedDeleted", .integer(report.droppedDeleted))
        context.output.set("destroyedFileVault", .bool(report.destroyedFileVault))
        context.output.set("awaitingVerification", .bool(report.awaitingVerification))
    }

    private static func setReport(_ report: LogoutReport, summary: String, _ out: Output) {
        out.set(
            "wipedSessions",
            .array(
                report.wipedSessions.map {
                    .object([("account", .string($0.account)), ("name", .string($0.name))])
                }))
        out.set("wipedSecrets", .array(report.wipedSecrets.map { .string($0.name) }))
        out.set("keptSecrets", .integer(report.keptSecrets))
        out.set("forgotUsername", .bool(report.forgotUsername))
        out.set("keptSessions", .integer(report.keptSessions))
        out.set("wipedLeftoverFileVault", .bool(report.wipedLeftoverFileVault))
        out.set("removedDamagedItems", .integer(report.removedDamagedItems))
        out.set("summary", .string(summary))
    }

    /// Says which program provides the Secret Service on the session bus and whether the bus
    /// can activate one (`secret service provider:`, JSON `secretServiceProvider`), asked within
    /// what is left of the policy's Secret Service deadline since `started`; never starts a service.
    private static func secretServiceProvider(
        _ context: StoreContext, policy: Policy, started: ContinuousClock.Instant
    ) throws {
        let out = context.output
        let left = Duration.milliseconds(Int64(policy.secretServiceTimeout * 1000)) - (ContinuousClock.now - started)
        let found: SecretServiceProviderFound?
        do {
            guard left > .zero else { throw LatchkeyError(.timedOut, "the Secret Service deadline had passed") }
            found = try SecretServiceProviderFound.onSessionBus(timeout: left)
        } catch let error as LatchkeyError {
            try out.line("secret service provider: not known (\(error.message))")
            out.set("secretServiceProvider", .null)
            return
        }
        guard let found else {
            try out.line("secret service provider: none (there is no session bus)")
            out.set("secretServiceProvider", .null)
            return
        }
        let owner = found.processID.map { pid in
            found.kind == .other
                ? " (pid \(pid))" : " (pid \(pid), \(found.executable ?? "its executable cannot be read"))"
        }
        let activation =
            found.activatable ? "the bus can activate a provider" : "the bus cannot activate a provider"
        try out.line(TextEscaping.escaped("secret service provider: \(found.name)\(owner ?? ""); \(activation)"))
        out.set(
            "secretServiceProvider",
            .object([
                ("found", .string(found.kind.rawValue)), ("name", .string(found.name)),
                ("pid", found.processID.map { .integer(Int64($0)) } ?? .null),
                ("executable", .string(found.executable)), ("activatable", .bool(found.activatable)),
            ]))
    }

    /// What `status` prints when the Secret Service it found cannot be used (locked,
    /// not answering, half working): the store, why, and what to do; the caller then
    /// exits with the error's status. The policy's Secret Service deadline is the budget of
    /// the whole command (counted from `started`): the provider is looked up only within
    /// what is left of it, and not at all after the service or the bus missed it.
    private static func unusableSecretService(
        _ context: StoreContext, _ error: LatchkeyError, started: ContinuousClock.Instant
    ) throws {
        let out = context.output
        // Opening the store read the policy already: this reads the same file again.
        let policy = try context.policy()
        let left = Duration.milliseconds(Int64(policy.secretServiceTimeout * 1000)) - (ContinuousClock.now - started)
        let provider = error.code == .timedOut || left <= .zero ? nil : SecretServiceBackend.provider(timeout: left)
        let store =
            provider.map { "the Secret Service of \(TextEscaping.escaped($0)) on the session bus" }
            ?? (error.code == .timedOut
                ? "a Secret Service on the session bus that did not answer (which program provides it was not asked)"
                : "no Secret Service owns org.freedesktop.secrets on the session bus")
        let advice: String
        switch error.code {
        case .locked where context.unlockMode(policy).mode == .prompt:
            advice =
                "status never raises the keyring's unlock prompt: unlock the keyring in its own app (such as Seahorse), or run a command that uses the credentials and answer the prompt it raises (Latchkey never asks for the keyring password itself)"
        case .locked:
            advice =
                "unlock the keyring (log in to the desktop session, or open it in the keyring's own app such as Seahorse or KWalletManager) and run the command again, or let the keyring ask with policy secretService.unlock \"prompt\" (the default in a graphical session); Latchkey never asks for the keyring password"
        case .timedOut:
            advice =
                "the provider did not answer in time: check that it runs and is not stopped, then run the command again"
        default:
            advice =
                "check that the provider runs and has a default collection (a keyring or wallet), or use the encrypted file with --backend file"
        }
        try out.line("backend: secret-service (found, cannot be used)")
        try out.line("store: \(store)")
        try out.line("why: \(error.message)")
        let unlock = (try? context.policy()).map { context.unlockMode($0) }
        if let unlock { try out.line("unlock: \(unlock.mode.rawValue) (\(unlock.why))") }
        try out.line("what to do: \(advice)")
        out.set("unlock", .string(unlock?.mode.rawValue))
        out.set("backend", .string("secret-service"))
        out.set("usable", .bool(false))
        out.set("provider", .string(provider))
        out.set("reason", .string(error.message))
        out.set("advice", .string(advice))
    }
}
