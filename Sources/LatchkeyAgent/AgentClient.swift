import Latchkey
import LatchkeyCommands
import LatchkeySystem

/// The client's side of the agent protocol (docs/AGENT.md): finding this user's
/// own agent and checking it before anything is sent, starting one, and running
/// a request through the `accepted` hand-off. Which commands go to the
/// agent, and what the client does when one does not run there, is the command
/// line's (its `AgentOffer`).
package enum AgentClient {
    /// How long the agent may take to answer a command: longer than any deadline of its own.
    package static let answerDeadline: Duration = .seconds(120)
    /// How long a request may take to send.
    package static let sendDeadline: Duration = .seconds(5)
    /// How long the agent may take to take the connection.
    package static let connectDeadline: Duration = .seconds(2)

    /// What looking for this user's agent found.
    package enum Connection {
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
    package static func connectToOwnAgent(_ runtime: AgentRuntimeDirectory) -> Connection {
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

    /// What became of a `run` request sent to the agent.
    package enum RunAnswer {
        /// It ran; its output is written and this is its exit status.
        case result(Int32)
        /// It needs a passphrase the agent does not hold: ask, and send it again with it.
        case needsPassphrase
        /// It did not run and never will (declined, never accepted, or the agent went
        /// before it accepted it): run it in-process.
        case notRun
        /// It was accepted, but its answer did not come whole: it may have run.
        case lost(wroteOutput: Bool)
        /// The agent speaks this other protocol version (one left running across an
        /// upgrade) and declined it: run it in-process.
        case otherVersion(UInt8)
    }

    /// Sends a `run` request, waits until the agent accepts it (at most
    /// ``answerDeadline``; the agent runs it as it accepts it), then hands the output to
    /// `write` as it comes and returns the result. Once `accepted` came the command is the
    /// agent's: a lost answer is ``RunAnswer/lost(wroteOutput:)``, never ``RunAnswer/notRun``.
    /// A client that stops waiting shuts its reading down before it looks a last time for
    /// `accepted` (``POSIX/LocalSocket/shutDownReading()``): an agent that accepts the
    /// request later cannot say so and does not run it, so it runs in one place only.
    /// - Parameters:
    ///   - request: The `run` request.
    ///   - connection: A connection to this user's agent.
    ///   - write: Writes a piece of the output where it belongs.
    ///   - refresh: Runs the refresh command with the refresh token a `refresh` message
    ///     carries, in this process (its answer goes back to the agent, which waits for it).
    /// - Throws: What `write` throws for standard output.
    package static func run(
        _ request: AgentMessage, on connection: POSIX.LocalSocket,
        write: (StandardStream, SecretBytes) throws -> Void,
        refresh: (SecretBytes) -> Result<RefreshCommandRun, LatchkeyError>
    ) throws -> RunAnswer {
        guard (try? connection.send(request, before: .now + sendDeadline)) != nil else {
            return .notRun
        }
        let first: (header: AgentMessage.Header, message: AgentMessage?)?
        do {
            first = try connection.receiveMessage(before: .now + answerDeadline)
        } catch let error as LatchkeyError where error.code == .timedOut {
            connection.shutDownReading()
            // An `accepted` sent before the shutdown is still there to read: then it runs in the agent.
            guard (try? connection.receiveMessage(before: .now)?.message)?.kind == .accepted else { return .notRun }
            return .lost(wroteOutput: false)
        } catch {
            return .notRun
        }
        if let first, first.header.version != AgentMessage.protocolVersion {
            return first.message?.kind == .declined ? .otherVersion(first.header.version) : .notRun
        }
        guard first?.message?.kind == .accepted else { return .notRun }
        var wroteOutput = false
        while true {
            guard let message = try? connection.receiveMessage(before: .now + answerDeadline)?.message else {
                return .lost(wroteOutput: wroteOutput)
            }
            switch message.kind {
            case .output:
                // A write that fails is reported as in-process (`.io`, exit 74), never dropped;
                // standard error that cannot be written is let go, as in-process.
                if let output = message.value(.standardOutput) {
                    wroteOutput = true
                    try write(.output, output)
                }
                if let error = message.value(.standardError) { try? write(.error, error) }
            case .refresh where !wroteOutput:
                // The agent waits for the answer under its own deadline; one it cannot take is its to report.
                let token = message.value(.refreshToken)
                let answer = AgentMessage.refreshAnswer(
                    token.map { refresh($0) }
                        ?? .failure(LatchkeyError(.invalidInput, "a refresh request without its refresh token")))
                try? connection.send(answer, before: .now + sendDeadline)
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

    /// Starts an agent detached from this process (its own session, standard
    /// streams on `/dev/null`, nothing else inherited) and waits until it answers, at most 2 s.
    /// When two commands start one at once, the second agent finds the first one's
    /// lock and exits; both commands connect to the first.
    /// - Parameters:
    ///   - runtime: The runtime directory.
    ///   - arguments: What the agent is run with after `agent run` (the `--policy` of the command that starts it).
    /// - Returns: The connection, or why there is none.
    /// - Throws: `.insecurePermissions` or `.cannotCreate` for the runtime directory; `.io` when it cannot start.
    package static func startAgent(_ runtime: AgentRuntimeDirectory, arguments: [String]) throws -> Connection {
        try runtime.prepare()
        _ = try POSIX.spawnDetached(try POSIX.executablePath(), arguments: ["agent", "run"] + arguments)
        let deadline = ContinuousClock.now + .seconds(2)
        var pause = Duration.milliseconds(1)
        while ContinuousClock.now < deadline {
            switch connectToOwnAgent(runtime) {
            case .connected(let connection): return .connected(connection)
            case .ignored(let reason): return .ignored(reason)
            case .none: break
            }
            POSIX.sleep(pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        return .none(mayStart: false)
    }

    /// Sends `request` and reads the answer; nil when either fails.
    package static func exchange(_ request: AgentMessage, on connection: POSIX.LocalSocket) -> AgentMessage? {
        exchange(request, version: AgentMessage.protocolVersion, on: connection)?.message
    }

    /// Sends a request without fields (`status`, `stop`, `lock`, which read the same in every
    /// protocol version) and reads the answer. An agent of another version (one left running
    /// across an upgrade) declines it; it is then asked again in its own version, so
    /// `latchkey agent stop` stops it.
    /// - Parameters:
    ///   - kind: The request.
    ///   - connection: A connection to this user's agent.
    ///   - again: A new connection to it, for the request in the agent's version.
    /// - Returns: The answer, or nil when there is none.
    package static func ask(
        _ kind: AgentMessage.Kind, on connection: POSIX.LocalSocket, again: () -> POSIX.LocalSocket?
    ) -> AgentMessage? {
        guard let first = exchange(AgentMessage(kind), version: AgentMessage.protocolVersion, on: connection) else {
            return nil
        }
        let version = first.header.version
        guard version != AgentMessage.protocolVersion, first.message?.kind == .declined, let connection = again()
        else { return first.message }
        return exchange(AgentMessage(kind), version: version, on: connection)?.message
    }

    /// Sends `request` in protocol `version` and reads the answer in that version; nil when either fails.
    private static func exchange(_ request: AgentMessage, version: UInt8, on connection: POSIX.LocalSocket) -> (
        header: AgentMessage.Header, message: AgentMessage?
    )? {
        do {
            try connection.send(request, version: version, before: .now + sendDeadline)
            return try connection.receiveMessage(before: .now + answerDeadline, version: version)
        } catch {
            return nil
        }
    }
}
