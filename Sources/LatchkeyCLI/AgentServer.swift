import Latchkey
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `latchkey agent run`: the per-user service (docs/AGENT.md). It answers only
/// peers of its own uid on a private socket, reads each request under a
/// deadline on a connection of its own (so a slow or malformed client never
/// holds another), and runs the commands one at a time through the same code
/// as the command line, with their streams sent back. It holds the libsecret
/// connection and the unlocked passphrases; the vaults, keys and audit trails
/// are opened for each command under their file locks, so processes using the
/// library directly and the agent never corrupt each other.
final class AgentServer: Sendable {
    /// How long a client has to send its whole request once connected.
    static let requestDeadline: Duration = .seconds(2)
    /// How long a client has to take the answer.
    static let answerDeadline: Duration = .seconds(5)

    private let runtime: AgentRuntimeDirectory
    private let listener: POSIX.LocalSocket
    private let lock: AgentLock
    /// The socket file's identity when this agent made it; nil for a socket a service manager passed.
    private let ownSocket: [UInt64]?
    private let idleExit: Duration
    private let started = Date()
    private let unlocked = UnlockCache()
    /// The last time a connection came or ended, and how many are open.
    private let activity = Mutex<(last: ContinuousClock.Instant, open: Int)>((.now, 0))
    /// Held while a command runs: one at a time, one writer per namespace.
    private let execution = Mutex<Void>(())

    private init(
        runtime: AgentRuntimeDirectory, listener: POSIX.LocalSocket, lock: AgentLock, ownSocket: [UInt64]?,
        idleExit: Duration
    ) {
        self.runtime = runtime
        self.listener = listener
        self.lock = lock
        self.ownSocket = ownSocket
        self.idleExit = idleExit
    }

    /// Starts serving: takes the agent lock (when another agent holds it, says so
    /// and returns), adopts the socket a service manager passed (`LISTEN_FDS`) or
    /// replaces a stale socket file with its own, and serves until stopped or idle.
    /// - Throws: `LatchkeyError` `.unavailable` without a usable `XDG_RUNTIME_DIR`;
    ///   `.insecurePermissions` for a runtime directory others can use.
    static func serve(_ context: Context) throws {
        POSIX.forbidDumps()
        let runtime = try AgentRuntimeDirectory(runtimeDirectory: context.environment["XDG_RUNTIME_DIR"])
        try runtime.prepare()
        let activated =
            context.environment["LISTEN_PID"] == String(POSIX.processID)
            && Int(context.environment["LISTEN_FDS"] ?? "") ?? 0 >= 1
        // Said on the terminal of whoever ran it, before the streams are let go.
        if !activated, case .connected(let connection) = AgentClient.connectToOwnAgent(runtime),
            AgentClient.exchange(AgentMessage(.status), on: connection) != nil
        {
            Output.message("latchkey agent: an agent already serves \(runtime.socketPath)")
            return
        }
        // Nothing inherited may keep whoever started the agent waiting for its output: the
        // log goes to the journal under systemd (JOURNAL_STREAM), else to agent.log.
        try POSIX.detachStandardStreams(
            logPath: context.environment["JOURNAL_STREAM"] == nil ? runtime.logPath : nil,
            closingFrom: activated ? 4 : 3)
        let policy = try context.policy()
        guard let lock = try runtime.claimAgentLock() else {
            Output.message("latchkey agent: an agent already serves \(runtime.socketPath)")
            return
        }
        let listener: POSIX.LocalSocket
        var ownSocket: [UInt64]?
        if activated {
            listener = try POSIX.LocalSocket.adopting(descriptor: 3, path: runtime.socketPath)
        } else {
            // Holding the lock, no other agent runs: a socket file left here is stale.
            try runtime.removeSocket()
            listener = try POSIX.LocalSocket.listening(at: runtime.socketPath)
            ownSocket = try runtime.socketIdentity()
        }
        // What a long-lived process keeps: derived keys (within the unlock cache time) and open stores.
        DerivedKeyCache.shared.enable()
        BackendReuse.shared.enable()
        let server = AgentServer(
            runtime: runtime, listener: listener, lock: lock, ownSocket: ownSocket,
            idleExit: .milliseconds(Int64(policy.agent.idleTimeout * 1000)))
        // A command stuck in libsecret past its deadline would hold every later one: the agent
        // goes instead (its socket first), and the client retries that command in-process.
        SecretServiceBackend.whenACallNeverReturns {
            server.abandon(
                because:
                    "a Secret Service call did not return after its deadline, and libsecret does not stop waiting for it"
            )
        }
        server.log(
            "serving \(runtime.socketPath) (pid \(POSIX.processID)); idle exit after \(Int(policy.agent.idleTimeout)) s"
        )
        try server.run()
    }

    private func log(_ text: String) {
        Output.message("latchkey agent \(formatTime(Date())): \(text)")
    }

    /// How many threads wait for connections, each answering the one it takes
    /// itself (no hand-over on the way to the command): a client that stalls holds
    /// one of them until its deadline, never the others.
    static let connectionThreads = 4

    private func run() throws -> Never {
        for _ in 0..<Self.connectionThreads {
            try POSIX.startThread { self.answerConnections() }
        }
        while true {
            POSIX.sleep(.seconds(1))
            unlocked.expire()
            if ownSocket != nil && !socketFileIsOwn {
                stop(because: "its socket file was removed or replaced", removingSocket: false)
            }
            let (last, open) = activity.withLock { ($0.last, $0.open) }
            if open == 0 && ContinuousClock.now - last >= idleExit {
                stop(because: "no request came for \(idleExit)", removingSocket: true)
            }
        }
    }

    private func answerConnections() {
        while true {
            do {
                let connection = try listener.accept()
                activity.withLock {
                    $0.open += 1
                    $0.last = .now
                }
                handle(connection)
                activity.withLock {
                    $0.open -= 1
                    $0.last = .now
                }
            } catch {
                log("accepting failed: \(error)")
                POSIX.sleep(.milliseconds(100))
            }
        }
    }

    /// Ends the process once no command runs: the socket file goes first (so a
    /// client that comes now starts a new agent or runs in-process), then every
    /// cached key is forgotten.
    private func stop(because reason: String, removingSocket: Bool) -> Never {
        execution.withLock { _ in
            if removingSocket && socketFileIsOwn { try? runtime.removeSocket() }
            unlocked.forgetAll()
            log("stopping: \(reason)")
            withExtendedLifetime(lock) {}
            CommandLineIO.exit(status: 0)
        }
    }

    /// Whether the socket file is still the one this agent made (one a service manager
    /// passed is never this agent's to remove). A file that cannot be examined is not.
    private var socketFileIsOwn: Bool {
        ownSocket != nil && (try? runtime.socketIdentity()) == ownSocket
    }

    /// Ends the process at once, without waiting for the command that runs (it is
    /// stuck): the socket file goes first, so the client's retry in-process and later
    /// commands do not reach this agent.
    private func abandon(because reason: String) -> Never {
        if socketFileIsOwn { try? runtime.removeSocket() }
        log("stopping: \(reason)")
        POSIX.exitImmediately(LatchkeyError.Code.timedOut.exitStatus)
    }

    private func handle(_ connection: POSIX.LocalSocket) {
        do {
            let peer = try connection.peerUserID()
            guard peer == POSIX.effectiveUserID else {
                log("refused a connection from user \(peer): this agent serves only user \(POSIX.effectiveUserID)")
                return
            }
            guard let received = try connection.receiveMessage(before: .now + Self.requestDeadline) else { return }
            guard let request = received.message else {
                var declined = AgentMessage(.declined)
                declined.append(
                    .text,
                    "this agent speaks protocol version \(AgentMessage.protocolVersion), not \(received.header.version)"
                )
                try connection.send(declined, before: .now + Self.answerDeadline)
                return
            }
            switch request.kind {
            case .run:
                try connection.send(try run(request), before: .now + Self.answerDeadline)
            case .status:
                try connection.send(information(status()), before: .now + Self.answerDeadline)
            case .lock:
                let count = unlocked.forgetAll()
                log("locked: forgot the passphrases of \(count) namespace\(count == 1 ? "" : "s")")
                try connection.send(information(["forgotten=\(count)"]), before: .now + Self.answerDeadline)
            case .stop:
                try connection.send(information(["pid=\(POSIX.processID)"]), before: .now + Self.answerDeadline)
                stop(because: "asked to (latchkey agent stop)", removingSocket: true)
            default:
                throw LatchkeyError(.invalidInput, "a message of kind \(request.kind) is not a request")
            }
        } catch {
            // The error names the rule the client broke or the deadline it missed; never a secret.
            log("closed a connection: \(error)")
        }
    }

    private func information(_ lines: [String]) -> AgentMessage {
        AgentMessage(.information, lines.map { (.line, SecretBytes(utf8: $0)) })
    }

    /// What `agent status` shows: never a secret.
    private func status() -> [String] {
        var lines = [
            "pid=\(POSIX.processID)", "since=\(formatTime(started))", "socket=\(runtime.socketPath)",
            "version=\(Tool.version)",
        ]
        for namespace in unlocked.servedNamespaces {
            lines.append(
                "served=\(namespace.app)\t\(namespace.storeDirectory)\t\(namespace.backend)\t\(formatTime(namespace.last))"
            )
        }
        for entry in unlocked.held {
            lines.append("unlocked=\(entry.app)\t\(entry.storeDirectory)\t\(formatTime(entry.untilDate))")
        }
        return lines
    }

    /// Runs a command for a client.
    private func run(_ request: AgentMessage) throws -> AgentMessage {
        guard let arguments = request.texts(.argument), let variables = request.texts(.environment),
            let invokedAs = request.text(.invokedAs), let flags = request.value(.flags), flags.count == 1
        else {
            throw LatchkeyError(
                .invalidInput,
                "a run request without its arguments, environment, name or flags (or with text that is not UTF-8)")
        }
        var declined = AgentMessage(.declined)
        guard request.text(.toolVersion) == Tool.version else {
            declined.append(.text, "this agent runs latchkey \(Tool.version)")
            return declined
        }
        var environment: [String: String] = [:]
        for variable in variables {
            guard let equals = variable.firstIndex(of: "="), Environment.forwarded.contains(String(variable[..<equals]))
            else {
                throw LatchkeyError(
                    .invalidInput, "a run request names an environment variable the agent does not take")
            }
            environment[String(variable[..<equals])] = String(variable[variable.index(after: equals)...])
        }
        guard environment["DBUS_SESSION_BUS_ADDRESS"] == POSIX.environmentValue("DBUS_SESSION_BUS_ADDRESS") else {
            declined.append(.text, "the client is on another D-Bus session bus")
            return declined
        }
        let capture = CommandLineIO.Capture()
        let redirection = CommandLineIO.Redirection(
            input: request.value(.standardInput).map { .success($0) },
            inputIsTerminal: flags.withUnsafeBytes { $0[0] & 1 == 1 },
            passphrase: request.value(.passphrase), capture: capture, unlocked: unlocked)
        let status = execution.withLock { _ in
            CommandLineIO.$redirection.withValue(redirection) {
                runTool(arguments, invokedAs: invokedAs, environment: Environment(environment), viaAgent: false)
            }
        }
        if let prompt = redirection.passphraseNeeded.withLock({ $0 }) {
            var answer = AgentMessage(.needsPassphrase)
            answer.append(.text, prompt)
            return answer
        }
        let (output, error) = capture.contents
        var answer = AgentMessage(.result)
        answer.append(.exitStatus, status)
        answer.fields.append((.standardOutput, output))
        answer.fields.append((.standardError, error))
        return answer
    }
}
