import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `secret put|get|list|delete`: the app's named secrets (API keys, client secrets),
/// which belong to no account and are kept by the policy's `secrets` section.
enum SecretCommands {
    static func put(_ context: StoreContext, name: String, fromFile: String?) throws {
        let value: SecretBytes
        if let path = fromFile {
            // The command may run in the agent, whose working directory is not this one.
            guard path.hasPrefix("/") else {
                throw LatchkeyError(.usage, "--from-file needs an absolute path; nothing was saved")
            }
            value = try context.fromFileOption("--from-file") { try SecretFile.read(atPath: path) }
        } else {
            value = try context.standardInput()
        }
        guard !value.isEmpty else {
            throw LatchkeyError(.invalidInput, "the secret read is empty; nothing was saved")
        }
        let expires = try context.openVault().saveSecret(value, named: name)
        try context.output.line(
            "saved secret \(TextEscaping.escaped(name)), \(expires.map { "expires \(formatTime($0))" } ?? "no expiry")")
        context.output.set("saved", info(name: name, created: nil, expires: expires))
    }

    static func get(_ context: StoreContext, name: String, noNewline: Bool) throws {
        guard let secret = try context.openVault().secret(named: name) else {
            throw LatchkeyError(
                .notFound, "no secret \(TextEscaping.escaped(name)) (it was never saved, was deleted, or expired)")
        }
        context.output.set("secret", info(name: name, created: secret.created, expires: secret.expires))
        try context.output.secret(secret.value, key: "value", newline: !noNewline)
    }

    static func list(_ context: StoreContext) throws {
        let secrets = try context.openVault().secrets()
        for secret in secrets {
            let expires = secret.expires.map { "expires \(formatTime($0))" } ?? "no expiry"
            try context.output.line(
                "\(TextEscaping.escaped(secret.name))\tsaved \(formatTime(secret.created))\t\(expires)")
        }
        context.output.set(
            "secrets", .array(secrets.map { info(name: $0.name, created: $0.created, expires: $0.expires) }))
    }

    static func delete(_ context: StoreContext, name: String) throws {
        let existed = try context.openVault().deleteSecret(named: name)
        let shown = TextEscaping.escaped(name)
        try context.output.line(existed ? "deleted secret \(shown)" : "there was no secret \(shown); nothing to delete")
        context.output.set("deleted", .bool(existed))
    }

    private static func info(name: String, created: Date?, expires: Date?) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [("name", .string(name))]
        if let created { fields.append(("created", .time(created))) }
        fields.append(("expires", .time(expires)))
        return .object(fields)
    }
}
