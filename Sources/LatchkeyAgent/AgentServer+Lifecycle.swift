import Latchkey
import LatchkeyCommands
import LatchkeyProvider
import LatchkeySystem

// The server's lifecycle: starting to serve, the once-a-second watch (idle exit, the socket
// file, the log and the unlock cache), stopping and abandoning, and `agent status`.
extension AgentServer {
    /// Starts serving: takes the agent lock (when another agent holds it, says so
    /// and returns), adopts the socket a service manager passed (`LISTEN_FDS`) or
    /// replaces a stale socket file with its own, and serves until stopped or idle.
    /// - Parameters:
    ///   - environment: The variables the agent reads: `XDG_RUNTIME_DIR`, `LISTEN_PID`,
    ///     `LISTEN_FDS` and `JOURNAL_STREAM`.
    ///   - idleTimeout: How long it waits without a request before it stops; asked once
    ///     the standard streams are let go (an error is then in the log).
    /// - Throws: `LatchkeyError` `.unavailable` without a usable `XDG_RUNTIME_DIR`;
    ///   `.insecurePermissions` for a runtime directory others can use.
    package static func serve(
        environment: [String: String], idleTimeout: () throws -> Duration, secretService: Bool = false
    ) throws {
        POSIX.forbidDumps()
        let runtime = try AgentRuntimeDirectory(runtimeDirectory: environment["XDG_RUNTIME_DIR"])
        try runtime.prepare()
        let activated =
            environment["LISTEN_PID"] == String(POSIX.processID) && Int(environment["LISTEN_FDS"] ?? "") ?? 0 >= 1
        // Said on the terminal of whoever ran it, before the streams are let go.
        if !activated, case .connected(let connection) = AgentClient.connectToOwnAgent(runtime),
            AgentClient.exchange(AgentMessage(.status), on: connection) != nil
        {
            say("latchkey agent: an agent already serves \(runtime.socketPath)")
            return
        }
        // Nothing inherited may keep whoever started the agent waiting for its output: the
        // log goes to the journal under systemd (JOURNAL_STREAM, when it names standard
        // error: an agent a client started inherits the variable, not the stream), else to agent.log.
        let logPath = POSIX.standardErrorIsJournal(environment["JOURNAL_STREAM"]) ? nil : runtime.logPath
        try POSIX.detachStandardStreams(logPath: logPath, closingFrom: activated ? 4 : 3)
        let idleExit = try idleTimeout()
        guard let lock = try runtime.claimAgentLock() else {
            say("latchkey agent: an agent already serves \(runtime.socketPath)")
            return
        }
        let listener: POSIX.LocalSocket
        var ownSocket: [UInt64]?
        if activated {
            listener = try POSIX.LocalSocket.adopting(descriptor: 3, path: runtime.socketPath)
        } else {
            // Holding the lock, no other agent runs: a socket file left here is stale, and the
            // new socket replaces it with its final mode already set.
            listener = try POSIX.LocalSocket.listening(at: runtime.socketPath, by: runtime.newSocketPath)
            ownSocket = try runtime.socketIdentity()
        }
        let server = AgentServer(
            endpoint: Endpoint(runtime: runtime, listener: listener, lock: lock, ownSocket: ownSocket),
            idleExit: idleExit, executor: .storeCommands, logger: AgentLog(path: logPath), clock: .continuous,
            limits: Limits(),
            ending: { POSIX.exitProcess($0) })
        // A command stuck in libsecret past its deadline would hold every later one: the agent
        // goes instead (its socket first), and the client retries that command in-process.
        SecretServiceBackend.whenACallNeverReturns {
            server.abandon(
                because:
                    "a Secret Service call did not return after its deadline, and libsecret does not stop waiting for it"
            )
        }
        server.log("serving \(runtime.socketPath) (pid \(POSIX.processID)); idle exit after \(idleExit)")
        if secretService { SecretServiceProvider.start { server.log($0) } }
        try server.startAcceptingConnections()
        server.watch()
    }

    /// Writes a line on standard error (the terminal before the streams are let go, then the log).
    private static func say(_ text: String) {
        // Nothing sensible remains to be done when standard error cannot be written.
        try? POSIX.write(text + "\n", toDescriptor: 2, name: "standard error")
    }

    /// Once a second (of its clock) until it stopped: writes what the log held back, forgets
    /// passphrases whose time is up, and stops when its socket file was removed or replaced,
    /// or when no connection was open for ``idleExit`` (and its Secret Service provider, if
    /// any, does not own `org.freedesktop.secrets`).
    package func watch() {
        while !activity.withLock({ $0.stopped }) {
            clock.sleep(.seconds(1))
            logger.flush()
            vaults.expire()
            if endpoint?.ownSocket != nil && !socketFileIsOwn {
                stop(because: "its socket file was removed or replaced", removingSocket: false)
            }
            let (last, open) = activity.withLock { ($0.last, $0.open) }
            // An agent whose Secret Service provider owns the name is not idle: its clients are on the bus.
            if open == 0 && clock.now() - last >= idleExit && !SecretServiceProvider.isServing {
                stop(because: "no request came for \(idleExit)", removingSocket: true)
            }
        }
    }

    /// Stops once no command runs: the socket file goes first (so a client that comes now
    /// starts a new agent or runs in-process), then every cached key is forgotten, and the
    /// process ends (``ending``). From the first call on, no request is `accepted`; a later
    /// call waits for nothing and ends nothing.
    func stop(because reason: String, removingSocket: Bool) {
        let first = activity.withLock { activity -> Bool in
            defer { activity.stopping = true }
            return !activity.stopping
        }
        guard first else { return }
        while activity.withLock({ $0.running }) > 0 { POSIX.sleep(.milliseconds(10)) }
        if removingSocket && socketFileIsOwn { try? endpoint?.runtime.removeSocket() }
        vaults.forgetAll()
        logger.flush(all: true)
        log("stopping: \(reason)")
        withExtendedLifetime(endpoint?.lock) {}
        // The agent's `ending` never returns (`exit`): ``watch()`` ends only for a server that goes on living.
        ending(0)
        activity.withLock { $0.stopped = true }
    }

    /// Whether the socket file is still the one this agent made (one a service manager
    /// passed is never this agent's to remove). A file that cannot be examined is not.
    private var socketFileIsOwn: Bool {
        guard let endpoint, endpoint.ownSocket != nil else { return false }
        return (try? endpoint.runtime.socketIdentity()) == endpoint.ownSocket
    }

    /// Ends the process at once, without waiting for the command that runs (it is
    /// stuck): the socket file goes first, so the client's retry in-process and later
    /// commands do not reach this agent.
    private func abandon(because reason: String) -> Never {
        if socketFileIsOwn { try? endpoint?.runtime.removeSocket() }
        logger.flush(all: true)
        log("stopping: \(reason)")
        POSIX.exitImmediately(LatchkeyError.Code.timedOut.exitStatus)
    }

    /// What `agent status` shows: never a secret.
    func status() -> [String] {
        var lines = [
            "pid=\(POSIX.processID)", "since=\(formatTime(started))",
            "socket=\(endpoint?.runtime.socketPath ?? "none")", "version=\(ToolVersion.current)",
        ]
        for namespace in vaults.servedNamespaces {
            lines.append(
                "served=\(namespace.app)\t\(namespace.storeDirectory)\t\(namespace.backend)\t\(formatTime(namespace.last))"
            )
        }
        for entry in vaults.held where entry.passphrase {
            lines.append("unlocked=\(entry.app)\t\(entry.storeDirectory)\t\(formatTime(entry.until))")
        }
        return lines
    }
}
