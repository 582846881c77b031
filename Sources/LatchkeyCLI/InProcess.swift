import Latchkey
import LatchkeyCommands
import LatchkeySystem

/// A store command run in this process (docs/AGENT.md: when no agent is used): the same
/// ``StoreCommandRunner`` the agent runs, with vaults opened for the command
/// (``ProcessVaultSource``) and a refresh command run here (``LocalRefresh``). What needs a
/// person is asked here, before the run or when it gives back that it needs it: a command's
/// secret on a terminal, the vault's passphrase.
enum InProcess {
    /// What the client read for a store command before it ran it: its standard input and its
    /// passphrase (each nil when not read, or the error reading it met).
    struct Reads {
        /// Standard input, read to its end or asked for on the terminal.
        var input: Result<SecretBytes, LatchkeyError>?
        /// The passphrase, from `--passphrase-fd`, `--passphrase-file` or the terminal.
        var passphrase: Result<SecretBytes, LatchkeyError>?
    }

    /// What the error for a passphrase that was needed and not given adds, when nobody can be asked.
    static let passphraseRemedy =
        "; give it with --passphrase-fd N or --passphrase-file PATH (a 0600 file), or run on a terminal to be asked"

    /// Reads what `command` needs from this process before it runs: its standard input (asked
    /// for with its prompt, without echo, when standard input is a terminal), and the
    /// passphrase an option gives when the policy protects the file with one.
    /// - Parameters:
    ///   - command: The command.
    ///   - context: Its context.
    ///   - namespace: Its namespace, when it could be resolved.
    static func reads(for command: StoreCommand, _ context: Context, namespace: ResolvedNamespace?) -> Reads {
        var reads = Reads()
        if command.readsStandardInput {
            if context.execution.inputIsTerminal, let prompt = command.inputPrompt {
                reads.input = Result { () throws(LatchkeyError) in
                    try asLatchkeyError { try SecretInput.readFromTerminal(prompt: prompt, context.execution) }
                }
            } else {
                reads.input = Result { () throws(LatchkeyError) in try SecretInput.readInput() }
            }
        }
        if namespace != nil, context.globals.passphraseDescriptor != nil || context.globals.passphraseFile != nil,
            (try? context.policy())?.fileKeySource == .passphrase
        {
            // An option gives one, so the passphrase read is never nil.
            reads.passphrase = Result { () throws(LatchkeyError) in
                try asLatchkeyError { try context.suppliedPassphrase() ?? SecretBytes() }
            }
        }
        return reads
    }

    /// Runs `command` here and writes its output; asks for the vault's passphrase on the
    /// terminal (and runs it again) when it needs one and standard input is a terminal it does not read.
    /// - Parameters:
    ///   - command: The command, as parsed.
    ///   - context: Its context.
    ///   - reads: What was already read for it (for the agent, which did not run it); nil: read now.
    /// - Returns: The exit status.
    static func run(_ command: StoreCommand, _ context: Context, reads: Reads?) -> Int32 {
        let namespace = Result { () throws(LatchkeyError) in
            try asLatchkeyError { try context.resolvedNamespace(relativePolicy: true) }
        }
        let reads = reads ?? self.reads(for: command, context, namespace: try? namespace.get())
        let canAsk = context.execution.inputIsTerminal && !command.readsStandardInput
        var run = StoreRun(
            request: StoreRequest(command: command, json: context.globals.json), namespace: namespace,
            standardInput: reads.input, passphrase: reads.passphrase, passphraseRemedy: canAsk ? nil : passphraseRemedy)
        let deferral = SignalDeferral()
        let refresh = command.refreshCommand.map { LocalRefresh(command: $0, deferral: deferral) }
        var result = StoreCommandRunner.run(run, vaults: ProcessVaultSource(), refresh: refresh)
        if let prompt = result.passphrasePrompt {
            // The prompt is asked here, once, and the command runs again with what was typed.
            run.passphrase = Result { () throws(LatchkeyError) in
                try asLatchkeyError { try SecretInput.readFromTerminal(prompt: prompt, context.execution) }
            }
            result = StoreCommandRunner.run(run, vaults: ProcessVaultSource(), refresh: refresh)
        }
        // A signal that came while a refresh command ran ends the command now, printing no token.
        deferral.finish()
        return write(result.status, result.output, of: command, context.execution)
    }

    /// Writes a store command's output, then the usage line of a usage error (exit 64). What
    /// cannot be written to standard error is let go, as every message to the person is.
    /// - Returns: `status`, or 74 when standard output cannot be written.
    static func write(
        _ status: Int32, _ output: [(stream: StandardStream, bytes: SecretBytes)], of command: StoreCommand,
        _ execution: Execution
    ) -> Int32 {
        do {
            for piece in output {
                if piece.stream == .error {
                    try? execution.write(piece.bytes, to: .error)
                } else {
                    try execution.write(piece.bytes, to: .output)
                }
            }
        } catch {
            let failure = error as? LatchkeyError ?? LatchkeyError(.io, "\(error)")
            execution.message("latchkey: \(failure)")
            return failure.code.exitStatus
        }
        if status == LatchkeyError.Code.usage.exitStatus { execution.message(Help.usage(command.group)) }
        return status
    }

    /// `body`'s result, any error it throws as a `LatchkeyError`.
    static func asLatchkeyError<T>(_ body: () throws -> T) throws(LatchkeyError) -> T {
        do {
            return try body()
        } catch let error as LatchkeyError {
            throw error
        } catch {
            throw LatchkeyError(.internal, "\(error)")
        }
    }
}

/// The vaults of a command run in this process: each opened for the command, with the
/// passphrase it was given, and let go with it.
struct ProcessVaultSource: VaultSource {
    func vault(for namespace: ResolvedNamespace, passphrase: SecretBytes?, unlocking: Bool) throws -> Vault {
        let policy = try VaultSettings.policy(given: namespace.policy, default: .default, environment: [:]).0
        return try Vault.open(
            appID: try AppID(namespace.app), policy: policy, storeDirectory: namespace.storeDirectory,
            backend: namespace.backend.flatMap(Policy.BackendChoice.init(rawValue:)),
            passphrase: policy.fileKeySource == .passphrase ? passphrase : nil,
            unlock: unlocking
                ? policy.secretServiceUnlock ?? Policy.SecretServiceUnlock(rawValue: namespace.sessionUnlock) ?? .never
                : .never)
    }
}

/// A refresh command run in this process (`/bin/sh -c`, its own process group, under
/// ``GrantCommands/commandDeadline``), for a command run here or in the agent, which asks
/// this process to run it. SIGINT, SIGTERM and SIGHUP wait from the moment it starts until
/// the refresh has settled (`deferral`'s finish), then end the command (docs/ROTATION.md,
/// "Interrupting a refresh").
struct LocalRefresh: RefreshCommandRunner, @unchecked Sendable {
    // @unchecked: the deferral is used only on the thread that runs the command.
    /// The refresh command.
    let command: String
    /// What holds the signals back.
    let deferral: SignalDeferral

    func run(refreshToken: SecretBytes, deadline: Duration) throws -> RefreshCommandRun? {
        deferral.begin()
        let run = try POSIX.runShellCommand(
            command, input: refreshToken, outputLimit: GrantCommands.outputLimit,
            deadline: GrantCommands.commandDeadline)
        return RefreshCommandRun(status: run.status, output: run.output, timedOut: run.timedOut)
    }
}

extension StoreCommand {
    /// The prompt its secret is asked with on a terminal (`session put`, `secret put` without
    /// `--from-file`); nil for a command that reads its input to its end even there.
    var inputPrompt: String? {
        switch self {
        case .sessionPut(let name, _, _, false): "Token for session \(name): "
        case .secretPut(let name, nil): "Value of secret \(name): "
        default: nil
        }
    }

    /// The refresh command of `session get --refresh-command CMD`; nil for any other command.
    var refreshCommand: String? {
        if case .sessionGet(_, _, _, let command) = self { return command }
        return nil
    }
}
