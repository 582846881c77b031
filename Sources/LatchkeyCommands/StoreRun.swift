import Latchkey

/// One run of a store command, as its client prepared it: the typed command, the namespace it
/// works in and what the client read for it. It carries no command line, no environment and
/// no terminal: what needs the client's world was resolved or read there. What the client
/// could not resolve is carried as the error it met, which the command meets where it would
/// have used it (the namespace when it opens its vault, say), so it reports it its own way.
package struct StoreRun: Sendable {
    /// The command and the shape of its output.
    package var request: StoreRequest
    /// The namespace, as the client resolved it, or the error resolving it met.
    package var namespace: Result<ResolvedNamespace, LatchkeyError>
    /// Standard input, read to its end (or asked for on the client's terminal), when the
    /// command reads it, or the error reading it met.
    package var standardInput: Result<SecretBytes, LatchkeyError>?
    /// The passphrase the client read (`--passphrase-fd`, `--passphrase-file`, its terminal),
    /// or the error reading it met; nil: none was given.
    package var passphrase: Result<SecretBytes, LatchkeyError>?
    /// When the vault needs a passphrase that was not given: nil, the run ends with
    /// ``StoreRunResult/passphrasePrompt`` (its client can ask and run it again); else what
    /// the error the command fails with adds (how to give one), because nobody can be asked.
    package var passphraseRemedy: String?

    /// A run of these parts.
    package init(
        request: StoreRequest, namespace: Result<ResolvedNamespace, LatchkeyError>,
        standardInput: Result<SecretBytes, LatchkeyError>?, passphrase: Result<SecretBytes, LatchkeyError>?,
        passphraseRemedy: String? = nil
    ) {
        self.request = request
        self.namespace = namespace
        self.standardInput = standardInput
        self.passphrase = passphrase
        self.passphraseRemedy = passphraseRemedy
    }
}

/// What one run of a store command gave: a value, never a field the command writes.
package struct StoreRunResult: Sendable {
    /// The exit status (`LatchkeyError.Code.exitStatus`).
    package var status: Int32
    /// What it wrote, in order: its output, its messages, its JSON document, its error.
    package var output: [(stream: StandardStream, bytes: SecretBytes)]
    /// The error it failed with, if it did.
    package var failure: LatchkeyError?
    /// The prompt for the passphrase it needs and was not given (its client asks with it and
    /// runs it again); its output is then empty. Nil otherwise.
    package var passphrasePrompt: String?

    /// A result of these parts.
    package init(
        status: Int32, output: [(stream: StandardStream, bytes: SecretBytes)], failure: LatchkeyError?,
        passphrasePrompt: String?
    ) {
        self.status = status
        self.output = output
        self.failure = failure
        self.passphrasePrompt = passphrasePrompt
    }
}

/// What a refresh command (`session get --refresh-command CMD`) did, in the process that ran
/// it: always the client's (docs/ROTATION.md).
package struct RefreshCommandRun: Sendable {
    /// Its exit status; nil when a signal ended it.
    package var status: Int32?
    /// What it wrote to standard output.
    package var output: SecretBytes
    /// Whether it was stopped for running past its deadline.
    package var timedOut: Bool

    /// A run of these parts.
    package init(status: Int32?, output: SecretBytes, timedOut: Bool) {
        self.status = status
        self.output = output
        self.timedOut = timedOut
    }
}

/// Who runs a refresh command for a store command: its client, with the client's environment,
/// working directory and standard error (the command line itself, or the client the agent
/// asks over its connection).
package protocol RefreshCommandRunner: Sendable {
    /// Runs the refresh command with `refreshToken` on its standard input.
    /// - Parameter deadline: How long it may take to answer (the command's own deadline and a margin).
    /// - Returns: What the command did, or nil when no answer came in time (a client that
    ///   ended, say): the refresh then got no answer, and the grant is kept.
    /// - Throws: The error running it met (it could not start, or wrote too much).
    func run(refreshToken: SecretBytes, deadline: Duration) throws -> RefreshCommandRun?
}

/// Runs the store commands (docs/ARCHITECTURE.md): a ``StoreRun`` against the vaults of a
/// ``VaultSource``, giving back a ``StoreRunResult``. The command line runs it in its own
/// process, the agent on the vaults it keeps open; neither asks anything of a person here.
package enum StoreCommandRunner {
    /// Runs `run` to its end, getting its vaults only from `vaults`.
    /// - Parameters:
    ///   - run: The run.
    ///   - vaults: Where the command gets its vaults.
    ///   - refresh: Who runs a refresh command the command needs (nil: one that needs it fails).
    /// - Returns: What it gave.
    package static func run(_ run: StoreRun, vaults: any VaultSource, refresh: (any RefreshCommandRunner)?)
        -> StoreRunResult
    {
        let capture = CapturedOutput()
        let output = Output(json: run.request.json, streams: capture)
        let context = StoreContext(run, output: output, vaults: vaults, refresh: refresh)
        defer { context.openedVaults.finish() }
        do {
            try execute(run.request.command, context)
            for warning in context.openedVaults.vaults.withLock({ $0 }).flatMap(\.auditWarnings) {
                output.message("latchkey: warning: an audit entry was not written: \(warning)")
            }
            try output.finish(error: nil)
            return StoreRunResult(status: 0, output: capture.take(), failure: nil, passphrasePrompt: nil)
        } catch let needed as PassphraseNeeded {
            return StoreRunResult(
                status: needed.error.code.exitStatus, output: [], failure: needed.error, passphrasePrompt: needed.prompt
            )
        } catch {
            let status = output.fail(error)
            return StoreRunResult(
                status: status, output: capture.take(), failure: error as? LatchkeyError, passphrasePrompt: nil)
        }
    }

    /// The prompt that asks for the passphrase of `appID`'s vault.
    package static func passphrasePrompt(_ appID: AppID) -> String { "Passphrase for \(appID): " }

    /// Runs `command`.
    private static func execute(_ command: StoreCommand, _ context: StoreContext) throws {
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
            if refreshCommand != nil {
                return try GrantCommands.get(context, name: name, account: account, noNewline: noNewline)
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
}

/// What opening a vault throws when it needs a passphrase that was not given and its client
/// may ask for it: the client asks with `prompt` and runs the command again.
struct PassphraseNeeded: Error {
    /// The error opening the vault met.
    let error: LatchkeyError
    /// The prompt the client shows.
    let prompt: String
}
