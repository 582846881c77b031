import Latchkey
import LatchkeyCommands

/// `policy show|check`.
enum PolicyCommands {
    static func policyShow(_ context: Context, _ arguments: CommandArguments) throws {
        try show(try context.policy(), context.output)
    }

    static func policyCheck(_ context: Context, _ arguments: CommandArguments) throws {
        let path = arguments.positionals[0]
        let policy = try context.fromFileOption("policy check") { try Policy(contentsOfFile: path) }
        try context.output.line("\(path): a valid policy, '\(policy.name)'")
        context.output.set("valid", .bool(true))
        context.output.set("name", .string(policy.name))
    }

    private static func show(_ policy: Policy, _ out: Output) throws {
        var fields: [(String, JSONOutput)] = [
            ("version", .integer(policy.version)), ("name", .string(policy.name)), ("source", .string(policy.source)),
            ("username.remember", .bool(policy.remembersUsernames)),
            ("sessions.maxAgeSeconds", .integer(Int64(policy.sessionMaxAge))),
            ("sessions.wipeOnExit", .bool(policy.wipesSessionsOnExit)),
            ("onLogout.sessions", .string(policy.sessionsOnLogout.rawValue)),
            ("onLogout.username", .string(policy.usernameOnLogout.rawValue)),
            ("backend.kind", .string(policy.backend.rawValue)),
            ("backend.allowFileFallback", .bool(policy.allowsFileFallback)),
            ("backend.migrateToSecretService", .bool(policy.migratesToSecretService)),
            (
                "backend.secretServiceTimeoutMilliseconds",
                .integer(Int64((policy.secretServiceTimeout * 1000).rounded()))
            ),
            ("file.keySource", .string(policy.fileKeySource?.rawValue)),
        ]
        if let kdf = policy.kdf {
            fields += [
                ("file.kdf.targetUnlockMilliseconds", .integer(Int64((kdf.targetUnlockTime * 1000).rounded()))),
                ("file.kdf.minimumMemoryKiB", .integer(kdf.minimumMemoryKiB)),
                ("file.kdf.maximumMemoryKiB", .integer(kdf.maximumMemoryKiB)),
                ("file.kdf.maximumOpsLimit", .integer(kdf.maximumOpsLimit)),
            ]
        }
        fields += [
            ("audit.enabled", .bool(policy.audit.isEnabled)),
            ("audit.maxEntries", policy.audit.retention.maxEntries.map { .integer($0) } ?? .null),
            (
                "audit.maxAgeDays",
                policy.audit.retention.maxAge.map { .integer(Int64(($0 / 86_400).rounded())) } ?? .null
            ),
            ("audit.onFailure", .string(policy.audit.failureMode.rawValue)),
            ("agent.autostart", .bool(policy.agent.autostarts)),
            ("agent.unlockCacheSeconds", .integer(Int64(policy.agent.unlockCacheDuration.rounded()))),
            ("agent.idleExitSeconds", .integer(Int64(policy.agent.idleTimeout.rounded()))),
            ("agent.secretServiceClientCollections", .bool(policy.agent.allowsClientCollections)),
            ("agent.serveSecretService", .bool(policy.agent.servesSecretService)),
        ]
        for (key, value) in fields {
            try out.line("\(key): \(textOf(value))")
        }
        out.set("policy", JSONOutput.nested(fields))
    }

    private static func textOf(_ value: JSONOutput) -> String {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        default: "null"
        }
    }
}
