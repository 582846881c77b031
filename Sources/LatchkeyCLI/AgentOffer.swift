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
        /// Run it in this process, against this execution (nil: the one it was offered with).
        case inProcess(Execution?)
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

        let input = readsInput ? Result { () throws(LatchkeyError) in try SecretInput.readInput(execution) } : nil
        var passphrase: SecretBytes?
        let inProcess = {
            Execution(
                input: input, inputIsTerminal: inputIsTerminal, passphrase: passphrase, capture: nil)
        }
        // Input that cannot be read fails in-process, where the command reports it its own way (docker's on standard output too).
        guard case .success(let inputBytes)? = input ?? .success(SecretBytes()) else { return .inProcess(inProcess()) }
        // The namespace is resolved here, from this process's options and environment; one that
        // cannot be fails in-process, where the command reports it its own way.
        guard let namespace = try? context.resolvedNamespace().encoded(),
            let typed = try? StoreRequest(command: command, json: context.globals.json).encoded()
        else { return .inProcess(inProcess()) }
        guard let connection = connect(runtime, context) else { return .inProcess(inProcess()) }
        var request = AgentMessage(.run)
        request.append(.toolVersion, Tool.version)
        request.fields.append((.command, typed))
        if let bus = context.environment["DBUS_SESSION_BUS_ADDRESS"] { request.append(.sessionBus, bus) }
        request.fields.append((.namespace, namespace))
        if readsInput { request.fields.append((.standardInput, inputBytes)) }

        // A passphrase given with an option is read now, when the policy needs one (as in-process), and
        // always used (a wrong one is refused even while the agent holds the right one); one that
        // cannot be read, or a policy that cannot be read, fails in-process.
        if context.globals.passphraseDescriptor != nil || context.globals.passphraseFile != nil {
            guard let policy = try? context.policy() else { return .inProcess(inProcess()) }
            if policy.fileKeySource == .passphrase {
                guard let given = try? context.suppliedPassphrase() else { return .inProcess(inProcess()) }
                passphrase = given
                request.fields.append((.passphrase, given))
            }
        }
        request.append(.patience, Int32(AgentClient.answerDeadline / .milliseconds(1)))
        // A refresh command runs here, with this process's environment, working directory and
        // standard error, when the agent asks (docs/AGENT.md). As in-process, SIGINT, SIGTERM
        // and SIGHUP wait from the moment it starts until the refresh has settled in the agent,
        // which it has once the agent sends anything else; then the command ends by the signal
        // that came, printing no token (docs/ROTATION.md, "Interrupting a refresh").
        let deferral = SignalDeferral()
        let refreshCommand: String?
        if case .sessionGet(_, _, _, let given) = command { refreshCommand = given } else { refreshCommand = nil }
        let refresh = { (refreshToken: SecretBytes) -> Result<RefreshCommandRun, LatchkeyError> in
            guard let refreshCommand else {
                return .failure(
                    LatchkeyError(.invalidInput, "the agent asked for a refresh this command does not make"))
            }
            deferral.begin()
            return Result { () throws(LatchkeyError) in
                do {
                    return try GrantCommands.runHere(refreshCommand, refreshToken: refreshToken)
                } catch let error as LatchkeyError {
                    throw error
                } catch {
                    throw LatchkeyError(.internal, "\(error)")
                }
            }
        }
        let write = { (stream: AgentOutputStream, bytes: SecretBytes) throws in
            deferral.finish()
            try execution.write(bytes, to: stream)
        }
        defer { deferral.finish() }
        var answer = try AgentClient.run(request, on: connection, write: write, refresh: refresh)
        if case .needsPassphrase = answer {
            // The vault is locked in the agent and no option gave a passphrase: ask on the terminal, as in-process.
            guard passphrase == nil, inputIsTerminal && !readsInput else { return .inProcess(inProcess()) }
            // The prompt is this process's own words, never the peer's.
            let typed = try SecretInput.readFromTerminal(
                prompt: try Context.passphrasePrompt(context.appID()), execution)
            passphrase = typed
            request.fields.append((.passphrase, typed))
            guard case .connected(let again) = AgentClient.connectToOwnAgent(runtime) else {
                return .inProcess(inProcess())
            }
            answer = try AgentClient.run(request, on: again, write: write, refresh: refresh)
        }
        switch answer {
        case .result(let status): return .ran(status)
        case .notRun, .needsPassphrase: return .inProcess(inProcess())
        case .otherVersion(let version):
            execution.message(
                "latchkey: the agent on \(runtime.socketPath) speaks protocol version \(version) and this latchkey \(AgentMessage.protocolVersion) (an agent left running across an upgrade); running in this process. `latchkey agent stop` stops it, and the next command starts a new one"
            )
            return .inProcess(inProcess())
        case .lost(let wroteOutput):
            // Only a command that changes nothing may run again; one that may have changed
            // something, or whose output was already partly written, is reported.
            if !wroteOutput && command.readsOnly { return .inProcess(inProcess()) }
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
