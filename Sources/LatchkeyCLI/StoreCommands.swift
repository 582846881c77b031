import Latchkey
import LatchkeyCommands

/// The commands that use a store: parsed once from their command line into a
/// ``StoreCommand`` (``Command/store``), then run, in this process or in the agent, from
/// that value alone (``execute(_:_:)``).
enum StoreCommands {
    /// What one run of a store command gave, besides its output: a value, never a field the
    /// command writes.
    struct Outcome {
        /// The exit status.
        var status: Int32
        /// The error it failed with, if it did.
        var failure: LatchkeyError?
        /// Inside the agent: the prompt for the passphrase it needs and the agent does not
        /// hold (the client asks and sends the command again); nil otherwise.
        var passphrasePrompt: String?
    }

    /// Runs `command` against `context` and ends its output: writes its audit warnings and its
    /// JSON document, and on failure the error (and, for a usage error, the usage line).
    /// - Returns: What it gave.
    static func execute(_ command: StoreCommand, _ context: Context) -> Outcome {
        defer { context.openedVaults.finish() }
        do {
            try run(command, context)
            for warning in context.openedVaults.vaults.withLock({ $0 }).flatMap(\.auditWarnings) {
                context.output.message("latchkey: warning: an audit entry was not written: \(warning)")
            }
            try context.output.finish(error: nil)
            return Outcome(status: 0)
        } catch let needed as PassphraseNeeded {
            return Outcome(
                status: fail(needed.error, context.output, group: command.group), failure: needed.error,
                passphrasePrompt: needed.prompt)
        } catch {
            return Outcome(status: fail(error, context.output, group: command.group), failure: error as? LatchkeyError)
        }
    }

    /// Ends a run that failed with `error`: the message, the usage line of `group` for a usage
    /// error, the JSON document with the error.
    /// - Returns: The exit status.
    static func fail(_ error: any Error, _ output: Output, group: String?) -> Int32 {
        let failure = (error as? LatchkeyError ?? LatchkeyError(.internal, "\(error)")).withCommandLineRemedy
        output.message("latchkey: \(failure)")
        if failure.code == .usage { output.message(Help.usage(group)) }
        do {
            try output.finish(error: failure)
        } catch {
            // The document with the result could not be written (a secret that is not
            // UTF-8, say): write one with the error alone.
            try? Output(json: true, execution: output.execution).finish(error: failure)
        }
        return failure.code.exitStatus
    }

    /// Runs `command`.
    private static func run(_ command: StoreCommand, _ context: Context) throws {
        switch command {
        case .status(let origins): try VaultCommands.status(context, origins: origins)
        case .usernameGet: try VaultCommands.usernameGet(context)
        case .usernameSet(let name): try VaultCommands.usernameSet(context, name: name)
        case .usernameForget: try VaultCommands.usernameForget(context)
        case .rememberOn: try VaultCommands.setRemember(true, context)
        case .rememberOff: try VaultCommands.setRemember(false, context)
        case .rememberShow: try VaultCommands.rememberShow(context)
        case .sessionPut(let name, let account, let expiresIn, let grant):
            if grant { return try GrantCommands.put(context, name: name, account: account) }
            try SessionCommands.put(context, name: name, account: account, expiresIn: expiresIn)
        case .sessionGet(let name, let account, let noNewline, let refreshCommand):
            if let refreshCommand {
                return try GrantCommands.get(
                    context, name: name, account: account, command: refreshCommand, noNewline: noNewline)
            }
            try SessionCommands.get(context, name: name, account: account, noNewline: noNewline)
        case .sessionList(let account): try SessionCommands.list(context, account: account)
        case .sessionDelete(let name, let account): try SessionCommands.delete(context, name: name, account: account)
        case .secretPut(let name, let fromFile): try SecretCommands.put(context, name: name, fromFile: fromFile)
        case .secretGet(let name, let noNewline): try SecretCommands.get(context, name: name, noNewline: noNewline)
        case .secretList: try SecretCommands.list(context)
        case .secretDelete(let name): try SecretCommands.delete(context, name: name)
        case .logout(let account): try VaultCommands.logout(context, account: account)
        case .wipe(let confirmed): try VaultCommands.wipe(context, confirmed: confirmed)
        case .migrate: try VaultCommands.migrate(context)
        case .auditShow(let since): try AuditCommands.show(context, since: since)
        case .auditVerify: try AuditCommands.verify(context)
        case .auditReset(let confirmed): try AuditCommands.reset(context, confirmed: confirmed)
        case .gitCredential(let action): try GitCommands.run(context, action: action)
        case .dockerCredential(let action): try DockerCommands.run(context, action: action)
        }
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
