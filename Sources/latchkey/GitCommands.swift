import Latchkey

/// `git-credential get|store|erase`, also run when the tool is invoked as
/// `git-credential-latchkey`: git's input on standard input, the answer on
/// standard output. The protocol itself is `GitCredentialHelper`'s.
enum GitCommands {
    static func run(_ context: Context, _ arguments: CommandArguments) throws {
        let action = arguments.positionals[0]
        let input = try SecretInput.read(fromDescriptor: 0, stripOneTrailingNewline: false)
        let helper = GitCredentialHelper(vault: try context.openVault())
        context.output.set("action", .string(action))
        guard context.output.json else {
            try context.output.raw(try helper.run(action: action, input: input))
            return
        }
        let message = try GitCredentialMessage.parse(input)
        switch action {
        case "get":
            guard let found = try helper.get(message) else {
                context.output.set("credential", .null)
                return
            }
            context.output.set("credential", .object([
                ("username", .string(found.username)),
                ("password", found.password.map { .secret($0) } ?? .null),
                ("password_expiry_utc", found.passwordExpiry.map { .integer(Int64($0.timeIntervalSince1970)) } ?? .null),
                ("oauth_refresh_token", found.oauthRefreshToken.map { .secret($0) } ?? .null),
            ]))
        case "store":
            try helper.store(message)
        case "erase":
            context.output.set("erased", .integer(try helper.erase(message)))
        default:
            context.output.set("ignored", .bool(true))
        }
    }
}
