import Latchkey
import LatchkeyCommands

/// The commands that use a store: parsed once from their command line into a
/// ``StoreCommand`` (``Command/store``), then run from that value alone, in the agent
/// (``AgentOffer``) or in this process (``InProcess``), by ``StoreCommandRunner``.
enum StoreCommands {
    /// Ends a command line that failed with `error`: the message, the usage line of `group`
    /// for a usage error, the JSON document with the error.
    /// - Returns: The exit status.
    static func fail(_ error: any Error, _ output: Output, group: String?) -> Int32 {
        output.fail(error) { _ in Help.usage(group) }
    }

    // What each command's line parses into (``Command/store``).

    static func status(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .status(context.settingOrigins())
    }

    static func usernameSet(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .usernameSet(name: arguments.positionals[0])
    }

    static func sessionPut(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        let name = arguments.positionals[0]
        let account = arguments[.account] ?? ""
        if arguments.has(.grant) {
            guard arguments[.expiresIn] == nil else {
                throw LatchkeyError(
                    .usage, "--expires-in cannot be given with --grant: the token response's expires_in says it")
            }
            return .sessionPut(name: name, account: account, expiresIn: nil, grant: true)
        }
        let lifetime = try arguments.duration(.expiresIn, in: 1...315_360_000)
        return .sessionPut(name: name, account: account, expiresIn: lifetime, grant: false)
    }

    static func sessionGet(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .sessionGet(
            name: arguments.positionals[0], account: arguments[.account] ?? "", noNewline: arguments.has(.noNewline),
            refreshCommand: arguments[.refreshCommand])
    }

    static func sessionList(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .sessionList(account: arguments[.account])
    }

    static func sessionDelete(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .sessionDelete(name: arguments.positionals[0], account: arguments[.account] ?? "")
    }

    static func secretPut(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .secretPut(name: arguments.positionals[0], fromFile: arguments[.fromFile])
    }

    static func secretGet(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .secretGet(name: arguments.positionals[0], noNewline: arguments.has(.noNewline))
    }

    static func secretDelete(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .secretDelete(name: arguments.positionals[0])
    }

    static func logout(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .logout(account: arguments[.account])
    }

    /// `wipe`: confirmed by `--yes`, or asked on this process's terminal.
    static func wipe(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        let appID = try context.appID()
        return .wipe(
            confirmed: try Confirmation.confirmed(
                "Erase every credential of \(appID) (sessions and the remembered username)?",
                refusal: "wipe erases every credential of \(appID)", arguments, context.execution))
    }

    static func auditShow(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .auditShow(since: try arguments.integer(.since, in: 0...Int64.max).map { UInt64($0) })
    }

    /// `audit reset`: confirmed by `--yes`, or asked on this process's terminal.
    static func auditReset(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        let appID = try context.appID()
        return .auditReset(
            confirmed: try Confirmation.confirmed(
                "Set the broken audit trail of \(appID) aside and start a new one?",
                refusal: "audit reset starts a new audit trail for \(appID)", arguments, context.execution))
    }

    static func gitCredential(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .gitCredential(action: arguments.positionals[0])
    }

    static func dockerCredential(_ context: Context, _ arguments: CommandArguments) throws -> StoreCommand {
        .dockerCredential(action: arguments.positionals[0])
    }

    /// A command without arguments of its own.
    static func plain(_ command: StoreCommand) -> @Sendable (Context, CommandArguments) throws -> StoreCommand {
        { _, _ in command }
    }
}

extension StoreCommand {
    /// The first word of its name, whose usage line a usage error shows.
    var group: String {
        switch self {
        case .status: "status"
        case .usernameGet, .usernameSet, .usernameForget: "username"
        case .rememberOn, .rememberOff, .rememberShow: "remember"
        case .sessionPut, .sessionGet, .sessionList, .sessionDelete: "session"
        case .secretPut, .secretGet, .secretList, .secretDelete: "secret"
        case .logout: "logout"
        case .wipe: "wipe"
        case .migrate: "migrate"
        case .auditShow, .auditVerify, .auditReset: "audit"
        case .gitCredential: "git-credential"
        case .dockerCredential: "docker-credential"
        }
    }
}
