import Latchkey

/// `status`, `username`, `remember`, `logout`, `wipe`, `migrate`.
enum VaultCommands {
    static func status(_ context: Context, _ arguments: CommandArguments) throws {
        let vault = try context.openVault()
        let status = try vault.status()
        // The command line opens stores in a directory only; a vault kept in memory is a test's.
        let directory = status.storeDirectory ?? ""
        let settings = try context.settings(policy: vault.policy, storeDirectory: directory)
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
        if let path = status.fileVaultPath {
            try out.line(
                "vault file: \(path)\(status.leftoverFileVault ? " (left over from a fallback; `latchkey migrate` moves it)" : "")"
            )
        }
        try out.line(
            "remember username: \(status.usernameMemoryAllowed ? "on" : "off"); a username is \(status.usernameRemembered ? "" : "not ")remembered"
        )
        try out.line("sessions: \(status.sessionCount) in \(accounts)")
        try out.line("named secrets: \(status.secretCount)")
        try out.line("audit trails: \(status.auditTrails.isEmpty ? "off" : status.auditTrails.joined(separator: ", "))")
        out.set("app", .string(status.appID.rawValue))
        out.set("backend", .string(status.backend.rawValue))
        out.set("reason", .string(status.reason))
        out.set("protection", .string(status.protection))
        out.set("policy", .object([("name", .string(status.policyName)), ("source", .string(status.policySource))]))
        out.set("storeDirectory", .string(directory))
        out.set("fileVault", .string(status.fileVaultPath))
        out.set("leftoverFileVault", .bool(status.leftoverFileVault))
        out.set("remembersUsername", .bool(status.usernameMemoryAllowed))
        out.set("usernameRemembered", .bool(status.usernameRemembered))
        out.set("sessions", .integer(status.sessionCount))
        out.set("accounts", .integer(status.accountCount))
        out.set("secrets", .integer(status.secretCount))
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

    static func usernameGet(_ context: Context, _ arguments: CommandArguments) throws {
        guard let username = try context.openVault().lastUsername() else {
            throw LatchkeyError(.notFound, "no username is remembered")
        }
        try context.output.line(username)
        context.output.set("username", .string(username))
    }

    static func usernameSet(_ context: Context, _ arguments: CommandArguments) throws {
        let name = arguments.positionals[0]
        try context.openVault().rememberUsername(name).requireAllowed()
        try context.output.line("remembered the username")
        context.output.set("remembered", .bool(true))
    }

    static func usernameForget(_ context: Context, _ arguments: CommandArguments) throws {
        try context.openVault().forgetUsername()
        try context.output.line("forgot the remembered username")
        context.output.set("forgotten", .bool(true))
    }

    static func rememberOn(_ context: Context, _ arguments: CommandArguments) throws {
        try setRemember(true, context)
    }

    static func rememberOff(_ context: Context, _ arguments: CommandArguments) throws {
        try setRemember(false, context)
    }

    private static func setRemember(_ remembers: Bool, _ context: Context) throws {
        try context.openVault().setUsernameMemoryAllowed(remembers)
        try context.output.line(
            remembers
                ? "remembering the username is on"
                : "remembering the username is off; the remembered username was erased")
        context.output.set("remember", .bool(remembers))
    }

    static func rememberShow(_ context: Context, _ arguments: CommandArguments) throws {
        let vault = try context.openVault()
        let remembers = try vault.isUsernameMemoryAllowed()
        let policyAllows = vault.policy.remembersUsernames
        try context.output.line(
            "\(remembers ? "on" : "off")\(policyAllows ? "" : " (but policy '\(vault.policy.name)' never remembers usernames)")"
        )
        context.output.set("remember", .bool(remembers))
        context.output.set("policyAllows", .bool(policyAllows))
    }

    static func logout(_ context: Context, _ arguments: CommandArguments) throws {
        let account = arguments.options["--account"]
        let report = try context.openVault().logout(account: account)
        let summary = report.summary
        try context.output.line(
            TextEscaping.escaped("logged out \(account == nil ? "every account" : "the account given"): \(summary)"))
        setReport(report, summary: summary, context.output)
    }

    static func wipe(_ context: Context, _ arguments: CommandArguments) throws {
        let appID = try context.appID()
        guard
            try Confirmation.confirmed(
                "Erase every credential of \(appID) (sessions and the remembered username)?",
                refusal: "wipe erases every credential of \(appID)", arguments, context.execution)
        else {
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

    static func migrate(_ context: Context, _ arguments: CommandArguments) throws {
        let report = try context.openVault().migrate()
        try context.output.line(TextEscaping.escaped(report.summary))
        context.output.set("moved", .integer(report.moved))
        context.output.set("keptNewer", .integer(report.keptNewer))
        context.output.set("destroyedFileVault", .bool(report.destroyedFileVault))
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
        out.set("summary", .string(summary))
    }
}
