import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeySystem

/// The command line's side of the agent (docs/AGENT.md): a command that uses a
/// store runs in the agent when one answers (started first when none runs and
/// the policy's `agent.autostart` allows it), and in this process otherwise, with
/// the same output, exit status and audit entries either way. The protocol
/// itself is ``AgentClient``'s.
enum AgentOffer {
    /// Says on standard error, once for the command, why the socket found was not used.
    static func warnIgnored(_ runtime: AgentRuntimeDirectory, _ reason: String, _ execution: Execution) {
        execution.message(
            "latchkey: not using the agent socket \(runtime.socketPath): \(reason); running in this process")
    }

    /// What became of a command offered to the agent.
    enum Outcome {
        /// The agent ran it; this is its exit status (its output is written).
        case ran(Int32)
        /// Run it in this process, with what was already read for it (nil: nothing yet).
        case inProcess(InProcess.Reads?)
    }

    /// Runs `command` through the agent when it can: sends the typed command, never the command line.
    /// - Parameters:
    ///   - command: The command, as parsed.
    ///   - context: Its context.
    /// - Throws: What reading a passphrase the agent asked for throws; `.io` when
    ///   the agent's output cannot be written.
    static func offer(_ command: StoreCommand, _ context: Context) throws -> Outcome {
        guard context.environment["LATCHKEY_AGENT"] != "off",
            let runtime = try? AgentRuntimeDirectory(runtimeDirectory: context.environment["XDG_RUNTIME_DIR"])
        else { return .inProcess(nil) }
        let execution = context.execution
        // What only this process can do: ask on its terminal, or read a relative path.
        let readsInput = command.readsStandardInput
        let inputIsTerminal = execution.inputIsTerminal
        if readsInput && inputIsTerminal { return .inProcess(nil) }
        if let policy = context.globals.policy ?? context.environment["LATCHKEY_POLICY"], !policy.isEmpty,
            !policy.hasPrefix("/"), !policy.hasPrefix("built-in:")
        {
            return .inProcess(nil)
        }
        // The namespace is resolved here, from this process's options and environment; one that
        // cannot be fails in-process, where the command reports it its own way.
        guard let resolved = try? context.resolvedNamespace() else { return .inProcess(nil) }
        // A passphrase given with an option is read now, when the policy needs one (as in-process), and
        // always used (a wrong one is refused even while the agent holds the right one).
        var reads = InProcess.reads(for: command, context, namespace: resolved)
        // Input or a passphrase that cannot be read fails in-process, where the command reports it
        // its own way (docker's on standard output too).
        guard case .success(let inputBytes)? = reads.input ?? .success(SecretBytes()),
            (try? reads.passphrase?.get()) != nil || reads.passphrase == nil,
            let namespace = try? resolved.encoded(),
            let typed = try? StoreRequest(command: command, json: context.globals.json).encoded()
        else { return .inProcess(reads) }
        guard let connection = connect(runtime, context) else { return .inProcess(reads) }
        var request = AgentMessage(.run)
        request.append(.toolVersion, ToolVersion.current)
        request.fields.append((.command, typed))
        if let bus = context.environment["DBUS_SESSION_BUS_ADDRESS"] { request.append(.sessionBus, bus) }
        request.fields.append((.namespace, namespace))
        if readsInput { request.fields.append((.standardInput, inputBytes)) }
        if let given = try? reads.passphrase?.get() { request.fields.append((.passphrase, given)) }
        request.append(.patience, Int32(AgentClient.answerDeadline / .milliseconds(1)))
        // A refresh command runs here, with this process's environment, working directory and
        // standard error, when the agent asks (docs/AGENT.md). As in-process, SIGINT, SIGTERM
        // and SIGHUP wait from the moment it starts until the refresh has settled in the agent,
        // which it has once the agent sends anything else; then the command ends by the signal
        // that came, printing no token (docs/ROTATION.md, "Interrupting a refresh").
        let deferral = SignalDeferral()
        let local = command.refreshCommand.map { LocalRefresh(command: $0, deferral: deferral) }
        let refresh = { (refreshToken: SecretBytes) -> Result<RefreshCommandRun, LatchkeyError> in
            guard let local else {
                return .failure(
                    LatchkeyError(.invalidInput, "the agent asked for a refresh this command does not make"))
            }
            return Result { () throws(LatchkeyError) in
                // Never nil: it runs here, so it always answers.
                try InProcess.asLatchkeyError {
                    try local.run(refreshToken: refreshToken, deadline: GrantCommands.commandDeadline)
                        ?? RefreshCommandRun(status: nil, output: SecretBytes(), timedOut: false)
                }
            }
        }
        let write = { (stream: StandardStream, bytes: SecretBytes) throws in
            deferral.finish()
            try execution.write(bytes, to: stream)
        }
        defer { deferral.finish() }
        var answer = try AgentClient.run(request, on: connection, write: write, refresh: refresh)
        if case .needsPassphrase = answer {
            // The vault is locked in the agent and no option gave a passphrase: ask on the terminal, as in-process.
            guard reads.passphrase == nil, inputIsTerminal && !readsInput else { return .inProcess(reads) }
            // The prompt is this process's own words, never the peer's.
            let typed = try SecretInput.readFromTerminal(
                prompt: StoreCommandRunner.passphrasePrompt(try context.appID()), execution)
            reads.passphrase = .success(typed)
            request.fields.append((.passphrase, typed))
            guard case .connected(let again) = AgentClient.connectToOwnAgent(runtime) else {
                return .inProcess(reads)
            }
            answer = try AgentClient.run(request, on: again, write: write, refresh: refresh)
        }
        switch answer {
        case .result(let status):
            // The usage line is the command line's: the agent's output ends with the error.
            if status == LatchkeyError.Code.usage.exitStatus { execution.message(Help.usage(command.group)) }
            return .ran(status)
        case .notRun, .needsPassphrase: return .inProcess(reads)
        case .otherVersion(let version):
            execution.message(
                "latchkey: the agent on \(runtime.socketPath) speaks protocol version \(version) and this latchkey \(AgentMessage.protocolVersion) (an agent left running across an upgrade); running in this process. `latchkey agent stop` stops it, and the next command starts a new one"
            )
            return .inProcess(reads)
        case .lost(let wroteOutput):
            // Only a command that changes nothing may run again; one that may have changed
            // something, or whose output was already partly written, is reported.
            if !wroteOutput && command.readsOnly { return .inProcess(reads) }
            throw LatchkeyError(
                .timedOut,
                "the agent took the command but its answer was lost (the agent stopped or died); it may have run, so it is not run again here"
            )
        }
    }

    /// A connection to the running agent; when none answers and the policy allows
    /// it, one is started first. Nil when there is no agent to use.
    private static func connect(_ runtime: AgentRuntimeDirectory, _ context: Context) -> POSIX.LocalSocket? {
        var found = AgentClient.connectToOwnAgent(runtime)
        if case .none(let mayStart) = found {
            guard mayStart, let policy = try? context.policy(), policy.agent.autostarts,
                let started = try? AgentClient.startAgent(
                    runtime, arguments: context.globals.policy.map { ["--policy", $0] } ?? [])
            else { return nil }
            found = started
        }
        switch found {
        case .connected(let connection): return connection
        case .ignored(let reason):
            warnIgnored(runtime, reason, context.execution)
            return nil
        case .none: return nil
        }
    }
}
