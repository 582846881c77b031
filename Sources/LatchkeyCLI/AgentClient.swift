import Latchkey

/// The command line's side of the agent (docs/AGENT.md): a command that uses a
/// store runs in the agent when one answers (started first when none runs and
/// the policy's `agent.autostart` allows it), and in this process otherwise, with
/// the same output, exit status and audit entries either way.
enum AgentClient {
    /// How long the agent may take to answer a command: longer than any deadline of its own.
    static let answerDeadline: Duration = .seconds(120)
    /// How long a request may take to send.
    static let sendDeadline: Duration = .seconds(5)
    /// How long the agent may take to take the connection.
    static let connectDeadline: Duration = .seconds(2)

    /// What looking for this user's agent found.
    enum Connection {
        /// A connection to this user's own agent, every check passed.
        case connected(POSIX.LocalSocket)
        /// No agent answers; `mayStart` says whether one may be started.
        case none(mayStart: Bool)
        /// A socket is there but fails a check (the reason says which): it is sent nothing.
        case ignored(String)
    }

    /// Connects to this user's agent, after checking (``AgentRuntimeDirectory/inspect()``)
    /// the runtime directory, `latchkey/` and the socket, and, once connected
    /// (within ``connectDeadline``), that the process listening runs as this user (`SO_PEERCRED`).
    static func connectToOwnAgent(_ runtime: AgentRuntimeDirectory) -> Connection {
        switch runtime.inspect() {
        case .absent(let mayStart): return .none(mayStart: mayStart)
        case .untrusted(let reason): return .ignored(reason)
        case .trusted: break
        }
        let socket: POSIX.LocalSocket
        do {
            socket = try POSIX.LocalSocket.connected(to: runtime.socketPath, before: .now + connectDeadline)
        } catch let error as LatchkeyError where error.code == .timedOut {
            return .ignored("the agent took no connection within \(connectDeadline)")
        } catch {
            // A socket left by an agent that stopped: nothing listens.
            return .none(mayStart: true)
        }
        guard let peer = try? socket.peerUserID() else {
            return .ignored("the user of the process listening on it cannot be read (SO_PEERCRED)")
        }
        guard peer == POSIX.effectiveUserID else {
            return .ignored(
                "the process listening on it runs as user \(peer), not as this user (\(POSIX.effectiveUserID))")
        }
        return .connected(socket)
    }

    /// Says on standard error, once for the command, why the socket found was not used.
    static func warnIgnored(_ runtime: AgentRuntimeDirectory, _ reason: String) {
        Output.message("latchkey: not using the agent socket \(runtime.socketPath): \(reason); running in this process")
    }

    /// What became of a command offered to the agent.
    enum Outcome {
        /// The agent ran it; this is its exit status (its output is written).
        case ran(Int32)
        /// Run it in this process, with these streams (nil: the process's own).
        case inProcess(CommandLineIO.Redirection?)
    }

    /// Runs `command` through the agent when it can.
    /// - Parameters:
    ///   - command: The command.
    ///   - context: Its context.
    ///   - arguments: Its arguments as parsed.
    ///   - line: The whole command line after the tool's name.
    ///   - invokedAs: The name the tool was invoked as.
    /// - Throws: What reading a passphrase the agent asked for throws; `.io` when
    ///   the agent's output cannot be written.
    static func offer(
        _ command: Command, _ context: Context, _ arguments: CommandArguments, line: [String], invokedAs: String
    ) throws -> Outcome {
        guard command.viaAgent, context.environment["LATCHKEY_AGENT"] != "off",
            let runtime = try? AgentRuntimeDirectory(runtimeDirectory: context.environment["XDG_RUNTIME_DIR"])
        else { return .inProcess(nil) }
        // What only this process can do: ask on its terminal, or read a relative path.
        let readsInput = readsInput(command, arguments)
        let inputIsTerminal = SecretInput.standardInputIsTerminal
        if readsInput && inputIsTerminal { return .inProcess(nil) }
        if command.options.contains(where: { $0.name == "--yes" }) && !arguments.flags.contains("--yes") {
            return .inProcess(nil)
        }
        if let policy = context.globals.policy ?? context.environment["LATCHKEY_POLICY"], !policy.isEmpty,
            !policy.hasPrefix("/"), !policy.hasPrefix("built-in:")
        {
            return .inProcess(nil)
        }

        let input = readsInput ? Result { () throws(LatchkeyError) in try SecretInput.readInput() } : nil
        var passphrase: SecretBytes?
        let inProcess = {
            CommandLineIO.Redirection(
                input: input, inputIsTerminal: inputIsTerminal, passphrase: passphrase, capture: nil, unlocked: nil)
        }
        // Input that cannot be read fails in-process, where the command reports it its own way (docker's on standard output too).
        guard case .success(let inputBytes)? = input ?? .success(SecretBytes()) else { return .inProcess(inProcess()) }
        guard let connection = connect(runtime, context) else { return .inProcess(inProcess()) }
        var request = AgentMessage(.run)
        request.append(.toolVersion, Tool.version)
        request.append(.invokedAs, invokedAs)
        for argument in line { request.append(.argument, argument) }
        for (name, value) in context.environment.subset(Environment.forwarded).sorted(by: { $0.key < $1.key }) {
            request.append(.environment, "\(name)=\(value)")
        }
        request.fields.append((.flags, SecretBytes([inputIsTerminal ? 1 : 0])))
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
        request.append(.patience, Int32(answerDeadline / .milliseconds(1)))
        var answer = try run(request, on: connection)
        if case .needsPassphrase = answer {
            // The vault is locked in the agent and no option gave a passphrase: ask on the terminal, as in-process.
            guard passphrase == nil, inputIsTerminal && !readsInput else { return .inProcess(inProcess()) }
            // The prompt is this process's own words, never the peer's.
            let typed = try SecretInput.readFromTerminal(prompt: try Context.passphrasePrompt(context.appID()))
            passphrase = typed
            request.fields.append((.passphrase, typed))
            guard case .connected(let again) = connectToOwnAgent(runtime) else { return .inProcess(inProcess()) }
            answer = try run(request, on: again)
        }
        switch answer {
        case .result(let status): return .ran(status)
        case .notRun, .needsPassphrase: return .inProcess(inProcess())
        case .lost(let wroteOutput):
            // Only a command that changes nothing may run again; one that may have changed
            // something, or whose output was already partly written, is reported.
            if !wroteOutput && readsOnly(command, arguments) { return .inProcess(inProcess()) }
            throw LatchkeyError(
                .timedOut,
                "the agent took the command but its answer was lost (the agent stopped or died); it may have run, so it is not run again here"
            )
        }
    }

    /// What became of a `run` request sent to the agent.
    enum RunAnswer {
        /// It ran; its output is written and this is its exit status.
        case result(Int32)
        /// It needs a passphrase the agent does not hold: ask, and send it again with it.
        case needsPassphrase
        /// It did not run and never will (declined, never accepted, or the agent went
        /// before it was told to proceed): run it in-process.
        case notRun
        /// It was told to proceed, but its answer did not come whole: it may have run.
        case lost(wroteOutput: Bool)
    }

    /// Sends a `run` request, waits until the agent accepts it (at most
    /// ``answerDeadline``), tells it to proceed, then writes the output as it comes
    /// and returns the result. Once `proceed` is sent the command is the agent's:
    /// a lost answer is ``RunAnswer/lost(wroteOutput:)``, never ``RunAnswer/notRun``.
    /// - Throws: `.io` when standard output cannot be written.
    static func run(_ request: AgentMessage, on connection: POSIX.LocalSocket) throws -> RunAnswer {
        guard (try? connection.send(request, before: .now + sendDeadline)) != nil,
            let first = try? connection.receiveMessage(before: .now + answerDeadline)?.message,
            first.kind == .accepted,
            (try? connection.send(AgentMessage(.proceed), before: .now + sendDeadline)) != nil
        else { return .notRun }
        var wroteOutput = false
        while true {
            guard let message = try? connection.receiveMessage(before: .now + answerDeadline)?.message else {
                return .lost(wroteOutput: wroteOutput)
            }
            switch message.kind {
            case .output:
                // A write that fails is reported as in-process (`.io`, exit 74), never dropped;
                // standard error that cannot be written is let go, as in-process (``Output/message(_:)``).
                if let output = message.value(.standardOutput) {
                    wroteOutput = true
                    try CommandLineIO.write(output, to: .output)
                }
                if let error = message.value(.standardError) { try? CommandLineIO.write(error, to: .error) }
            case .result:
                guard let status = message.integer(.exitStatus) else { return .lost(wroteOutput: wroteOutput) }
                return .result(status)
            case .needsPassphrase where !wroteOutput:
                return .needsPassphrase
            default:
                return .lost(wroteOutput: wroteOutput)
            }
        }
    }

    /// Whether the command changes nothing in the store with these arguments, so running
    /// it again after a lost answer is safe.
    private static func readsOnly(_ command: Command, _ arguments: CommandArguments) -> Bool {
        switch command.name {
        case "status", "username get", "remember show", "session get", "session list", "audit show", "audit verify":
            return true
        case "git-credential": return arguments.positionals.first == "get"
        case "docker-credential": return ["get", "list"].contains(arguments.positionals.first ?? "")
        default: return false
        }
    }

    /// Whether the command reads its standard input with these arguments.
    private static func readsInput(_ command: Command, _ arguments: CommandArguments) -> Bool {
        guard command.readsStandardInput else { return false }
        switch command.words {
        case ["git-credential"]: return ["get", "store", "erase"].contains(arguments.positionals.first ?? "")
        case ["docker-credential"]: return ["store", "get", "erase"].contains(arguments.positionals.first ?? "")
        default: return true
        }
    }

    /// A connection to the running agent; when none answers and the policy allows
    /// it, one is started first. Nil when there is no agent to use.
    private static func connect(_ runtime: AgentRuntimeDirectory, _ context: Context) -> POSIX.LocalSocket? {
        switch connectToOwnAgent(runtime) {
        case .connected(let connection): return connection
        case .ignored(let reason):
            warnIgnored(runtime, reason)
            return nil
        case .none(let mayStart):
            guard mayStart, let policy = try? context.policy(), policy.agent.autostarts else { return nil }
            return try? startAgent(runtime, policy: context.globals.policy.map { ["--policy", $0] } ?? [])
        }
    }

    /// Starts an agent detached from this process (its own session, standard
    /// streams on `/dev/null`, nothing else inherited) and waits until it answers, at most 2 s.
    /// When two commands start one at once, the second agent finds the first one's
    /// lock and exits; both commands connect to the first.
    /// - Parameters:
    ///   - runtime: The runtime directory.
    ///   - policy: The `--policy` option the agent takes from the command that starts it, if any.
    static func startAgent(_ runtime: AgentRuntimeDirectory, policy: [String]) throws -> POSIX.LocalSocket? {
        try runtime.prepare()
        _ = try POSIX.spawnDetached(try POSIX.executablePath(), arguments: ["agent", "run"] + policy)
        let deadline = ContinuousClock.now + .seconds(2)
        var pause = Duration.milliseconds(1)
        while ContinuousClock.now < deadline {
            switch connectToOwnAgent(runtime) {
            case .connected(let connection): return connection
            case .ignored(let reason):
                warnIgnored(runtime, reason)
                return nil
            case .none: break
            }
            POSIX.sleep(pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        return nil
    }

    /// Sends `request` and reads the answer; nil when either fails.
    static func exchange(_ request: AgentMessage, on connection: POSIX.LocalSocket) -> AgentMessage? {
        do {
            try connection.send(request, before: .now + sendDeadline)
            return try connection.receiveMessage(before: .now + answerDeadline)?.message
        } catch {
            return nil
        }
    }
}
