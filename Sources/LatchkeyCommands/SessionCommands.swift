import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `session put|get|list|delete`. Without `--account`, a session belongs to the empty account.
enum SessionCommands {
    static func put(_ context: StoreContext, name: String, account: String, expiresIn lifetime: Int64?) throws {
        let vault = try context.openVault()
        let token = try context.standardInput()
        guard !token.isEmpty else {
            throw LatchkeyError(.invalidInput, "the token read from standard input is empty; nothing was saved")
        }
        let expires = try vault.saveSession(
            token, name: name, account: account, expires: lifetime.map { Date().addingTimeInterval(TimeInterval($0)) })
        try context.output.line("saved session \(TextEscaping.escaped(name)), expires \(formatTime(expires))")
        context.output.set("saved", info(name: name, account: account, created: nil, expires: expires))
        context.noteFallback(vault, wrote: "session \(TextEscaping.escaped(name))")
    }

    static func get(_ context: StoreContext, name: String, account: String, noNewline: Bool) throws {
        let vault = try context.openVault()
        guard let session = try vault.session(named: name, account: account) else {
            if try vault.damagedItems().contains(where: { $0.kind == .session && $0.name == name }) {
                throw LatchkeyError(
                    .notFound,
                    "session \(TextEscaping.escaped(name)) may be damaged: the Secret Service keeps an item of that name whose value it lost (it was stopped before it saved it); `latchkey session delete \(TextEscaping.escaped(name))` or `latchkey logout` removes it"
                )
            }
            // The account is never named in an error (docs/THREAT-MODEL.md).
            throw LatchkeyError(
                .notFound,
                "no session \(TextEscaping.escaped(name))\(account.isEmpty ? "" : " for the given account") (it was never saved, was deleted, or expired)"
            )
        }
        context.output.set(
            "session", info(name: name, account: account, created: session.created, expires: session.expires))
        try context.output.secret(session.value, key: "secret", newline: !noNewline)
    }

    static func list(_ context: StoreContext, account: String?) throws {
        let vault = try context.openVault()
        let sessions = try vault.sessions(account: account)
        // Damaged sessions have no account Latchkey can read back: listed by name, for every account.
        let damaged = try vault.damagedItems().filter { $0.kind == .session }.map(\.name).sorted()
        for session in sessions {
            let expires = session.expires.map { "expires \(formatTime($0))" } ?? "no expiry"
            try context.output.line(
                "\(TextEscaping.escaped(session.name))\taccount \(session.account.isEmpty ? "-" : TextEscaping.escaped(session.account))\tsaved \(formatTime(session.created))\t\(expires)"
            )
        }
        for name in damaged {
            try context.output.line(
                "\(TextEscaping.escaped(name))\tdamaged: the Secret Service lost its value (`latchkey session delete \(TextEscaping.escaped(name))` with its --account, or `latchkey logout`, removes it)"
            )
        }
        context.output.set(
            "sessions",
            .array(
                sessions.map {
                    info(name: $0.name, account: $0.account, created: $0.created, expires: $0.expires)
                }))
        context.output.set("damaged", .array(damaged.map { .object([("name", .string($0))]) }))
    }

    static func delete(_ context: StoreContext, name: String, account: String) throws {
        let existed = try context.openVault().deleteSession(named: name, account: account)
        let shown = TextEscaping.escaped(name)
        try context.output.line(
            existed
                ? "deleted session \(shown)"
                : "there was no session \(shown)\(account.isEmpty ? "" : " for the account given"); nothing to delete")
        context.output.set("deleted", .bool(existed))
    }

    /// The error of a session that is not there. The account is never named in an error (docs/THREAT-MODEL.md).
    static func missing(_ name: String, account: String) -> LatchkeyError {
        LatchkeyError(
            .notFound,
            "no session \(TextEscaping.escaped(name))\(account.isEmpty ? "" : " for the given account") (it was never saved, was deleted, or expired)"
        )
    }

    /// A session as `--json` shows it: never its token.
    static func info(name: String, account: String, created: Date?, expires: Date?) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [("name", .string(name)), ("account", .string(account))]
        if let created { fields.append(("created", .time(created))) }
        fields.append(("expires", .time(expires)))
        return .object(fields)
    }
}
