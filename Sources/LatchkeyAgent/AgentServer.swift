import Dispatch
import Latchkey
import LatchkeyCommands
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The per-user service `latchkey agent run` starts (docs/AGENT.md). It answers only
/// peers of its own uid on a private socket. It accepts every connection at once
/// and reads each on a thread of its own under a deadline (so a slow, idle or
/// malformed client never holds another), and runs each command in its
/// namespace's queue: one at a time per namespace (the single writer of each),
/// concurrently across namespaces, with the queues bounded. A request runs only
/// when its client is still waiting: it is dropped when its client's patience
/// ran out or it hung up (or, having stopped waiting, shut its reading down, so it cannot
/// be told `accepted`), and runs as it is `accepted` (from then on the client never runs
/// it itself). It holds the libsecret
/// connection and the unlocked passphrases; the vaults, keys and audit trails
/// are opened for each command under their file locks, so processes using the
/// library directly and the agent never corrupt each other. What a request runs
/// is the command line's (``AgentJobRunner``): the agent knows its protocol, its
/// queues and its cache, not the commands.
package final class AgentServer: Sendable {
    /// How long a client has to send its whole request once connected.
    static let requestDeadline: Duration = .seconds(2)
    /// How long a client has to take the answer.
    static let answerDeadline: Duration = .seconds(5)
    /// How many connections may be open at once (every peer is this user: others are
    /// refused as they are accepted, before they take a slot or a thread).
    static let maximumConnections = 256
    /// How many of them one process may hold, so one process holding many (idle, or
    /// reconnecting as each is dropped) never keeps the others out.
    static let maximumConnectionsPerProcess = 32
    /// How many commands may wait for one namespace; more are declined (and run in-process).
    static let maximumQueued = 32

    private let runtime: AgentRuntimeDirectory
    private let listener: POSIX.LocalSocket
    private let lock: AgentLock
    /// The socket file's identity when this agent made it; nil for a socket a service manager passed.
    private let ownSocket: [UInt64]?
    private let idleExit: Duration
    private let jobs: any AgentJobRunner
    /// The log: rate-limited by kind, and capped in `agent.log`.
    private let logger: AgentLog
    private let started = Date()
    private let unlocked = UnlockCache()
    /// The last time a connection came or ended, how many are open (in all and by peer
    /// process), how many commands run, and whether it stops.
    private let activity = Mutex(Activity())

    private struct Activity {
        var last = ContinuousClock.now
        var open = 0
        var openByProcess: [Int32: Int] = [:]
        var running = 0
        var stopping = false
    }
    /// How many threads wait for a connection (in `accept`); one that served a connection
    /// waits again only while fewer than ``spareThreads`` do, and ends otherwise.
    private let waitingThreads = Mutex(0)
    /// How many threads may wait for connections between requests, kept so that a request
    /// does not start a thread.
    static let spareThreads = 4
    /// Each namespace's queue, by store directory and app.
    private let lanes = Mutex<[String: Lane]>([:])

    /// One namespace's queue: its commands run one at a time, in the order they came.
    private final class Lane: Sendable {
        let queue: DispatchQueue
        /// How many commands wait for it or run in it.
        let waiting = Mutex(0)
        /// After a command of this namespace missed the Secret Service deadline: until when
        /// the commands queued behind it fail fast, and with what (the miss's own error).
        let silence = Mutex<(until: ContinuousClock.Instant, failure: LatchkeyError)?>(nil)

        init() {
            queue = DispatchQueue(label: "latchkey.agent.namespace")
        }
    }

    private init(
        runtime: AgentRuntimeDirectory, listener: POSIX.LocalSocket, lock: AgentLock, ownSocket: [UInt64]?,
        idleExit: Duration, jobs: any AgentJobRunner, logger: AgentLog
    ) {
        self.runtime = runtime
        self.listener = listener
        self.lock = lock
        self.ownSocket = ownSocket
        self.idleExit = idleExit
        self.jobs = jobs
        self.logger = logger
    }

    /// Starts serving: takes the agent lock (when another agent holds it, says so
    /// and returns), adopts the socket a service manager passed (`LISTEN_FDS`) or
    /// replaces a stale socket file with its own, and serves until stopped or idle.
    /// - Parameters:
    ///   - environment: The variables the agent reads: `XDG_RUNTIME_DIR`, `LISTEN_PID`,
    ///     `LISTEN_FDS` and `JOURNAL_STREAM`.
    ///   - idleTimeout: How long it waits without a request before it stops; asked once
    ///     the standard streams are let go (an error is then in the log).
    ///   - jobs: What runs the commands clients send.
    /// - Throws: `LatchkeyError` `.unavailable` without a usable `XDG_RUNTIME_DIR`;
    ///   `.insecurePermissions` for a runtime directory others can use.
    package static func serve(
        environment: [String: String], idleTimeout: () throws -> Duration, jobs: any AgentJobRunner
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
        // What a long-lived process keeps: derived keys (within the unlock cache time) and open stores.
        DerivedKeyCache.shared.enable()
        BackendReuse.shared.enable()
        let server = AgentServer(
            runtime: runtime, listener: listener, lock: lock, ownSocket: ownSocket, idleExit: idleExit, jobs: jobs,
            logger: AgentLog(path: logPath))
        // A command stuck in libsecret past its deadline would hold every later one: the agent
        // goes instead (its socket first), and the client retries that command in-process.
        SecretServiceBackend.whenACallNeverReturns {
            server.abandon(
                because:
                    "a Secret Service call did not return after its deadline, and libsecret does not stop waiting for it"
            )
        }
        server.log("serving \(runtime.socketPath) (pid \(POSIX.processID)); idle exit after \(idleExit)")
        try server.run()
    }

    /// Writes a line on standard error (the terminal before the streams are let go, then the log).
    private static func say(_ text: String) {
        // Nothing sensible remains to be done when standard error cannot be written.
        try? POSIX.write(text + "\n", toDescriptor: 2, name: "standard error")
    }

    private func log(_ text: String) {
        logger.write(text)
    }

    private func run() throws -> Never {
        waitingThreads.withLock { $0 += 1 }
        try POSIX.startThread { self.acceptConnections() }
        while true {
            POSIX.sleep(.seconds(1))
            logger.flush()
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

    /// Starts one more thread waiting for a connection (counted as waiting from now).
    private func startAcceptor() {
        waitingThreads.withLock { $0 += 1 }
        do {
            try POSIX.startThread { self.acceptConnections() }
        } catch {
            waitingThreads.withLock { $0 -= 1 }
            log("cannot start a thread for connections: \(error)")
        }
    }

    /// Waits for a connection and serves it on this thread, then waits for the next
    /// one, or ends when enough threads already wait. A thread that takes a connection
    /// first makes sure another waits for the next one (starting it when none is left),
    /// so every connection is accepted as it comes and each is read on a thread of its
    /// own, as with a thread started per connection, without starting one per connection.
    private func acceptConnections() {
        while true {
            let connection: POSIX.LocalSocket
            do {
                connection = try listener.accept()
            } catch {
                log("accepting failed: \(error)")
                POSIX.sleep(.milliseconds(100))
                continue
            }
            if waitingThreads.withLock({ waiting in
                waiting -= 1
                return waiting == 0
            }) {
                startAcceptor()
            }
            if let peer = admit(connection) {
                handle(connection)
                release(peer)
            }
            let waitsAgain = waitingThreads.withLock { waiting -> Bool in
                guard waiting < Self.spareThreads else { return false }
                waiting += 1
                return true
            }
            guard waitsAgain else { return }
        }
    }

    /// Takes a slot for a connection just accepted: its peer must run as this user, and
    /// neither all connections nor that process's may be at their limit; refused (closed
    /// when released) otherwise, saying why in the log.
    /// - Returns: The peer's process id, to give the slot back with; nil when refused.
    private func admit(_ connection: POSIX.LocalSocket) -> Int32? {
        let peer: (processID: Int32, userID: UInt32)
        do {
            peer = try connection.peerCredentials()
        } catch {
            log("refused a connection: \(error)")
            return nil
        }
        guard peer.userID == POSIX.effectiveUserID else {
            log("refused a connection from user \(peer.userID): this agent serves only user \(POSIX.effectiveUserID)")
            return nil
        }
        let refusal = activity.withLock { activity -> String? in
            guard activity.open < Self.maximumConnections else { return "\(Self.maximumConnections) are open" }
            guard activity.openByProcess[peer.processID, default: 0] < Self.maximumConnectionsPerProcess else {
                return "process \(peer.processID) already holds \(Self.maximumConnectionsPerProcess)"
            }
            activity.open += 1
            activity.openByProcess[peer.processID, default: 0] += 1
            activity.last = .now
            return nil
        }
        if let refusal {
            log("refused a connection: \(refusal)")
            return nil
        }
        return peer.processID
    }

    /// Gives back the slot of a connection of `process` that ended.
    private func release(_ process: Int32) {
        activity.withLock { activity in
            activity.open -= 1
            activity.openByProcess[process, default: 1] -= 1
            if activity.openByProcess[process] == 0 { activity.openByProcess[process] = nil }
            activity.last = .now
        }
    }

    /// Ends the process once no command runs: the socket file goes first (so a
    /// client that comes now starts a new agent or runs in-process), then every
    /// cached key is forgotten.
    private func stop(because reason: String, removingSocket: Bool) -> Never {
        activity.withLock { $0.stopping = true }
        while activity.withLock({ $0.running }) > 0 { POSIX.sleep(.milliseconds(10)) }
        if removingSocket && socketFileIsOwn { try? runtime.removeSocket() }
        unlocked.forgetAll()
        logger.flush(all: true)
        log("stopping: \(reason)")
        withExtendedLifetime(lock) {}
        POSIX.exitProcess(0)
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
        logger.flush(all: true)
        log("stopping: \(reason)")
        POSIX.exitImmediately(jobs.exitStatus(of: .timedOut))
    }

    private func handle(_ connection: POSIX.LocalSocket) {
        do {
            guard let received = try connection.receiveMessage(before: .now + Self.requestDeadline) else { return }
            let arrived = ContinuousClock.now
            guard let request = received.message else {
                var declined = AgentMessage(.declined)
                declined.append(
                    .text,
                    "this agent speaks protocol version \(AgentMessage.protocolVersion), not \(received.header.version)"
                )
                try connection.send(declined, version: received.header.version, before: .now + Self.answerDeadline)
                return
            }
            guard connection.pending() != .bytes else {
                throw LatchkeyError(.invalidInput, "a request has bytes after the body its header announced")
            }
            switch request.kind {
            case .run:
                try serve(request, arrived: arrived, on: connection)
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
            "version=\(jobs.toolVersion)",
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

    /// Runs a `run` request in its namespace's queue, once its client is told it is `accepted`,
    /// and sends the answer: the output in pieces, then the exit status.
    private func serve(_ request: AgentMessage, arrived: ContinuousClock.Instant, on connection: POSIX.LocalSocket)
        throws
    {
        let job: AgentJob
        switch try prepare(request, on: connection) {
        case .failure(let declined):
            try connection.send(declined.message, before: .now + Self.answerDeadline)
            return
        case .success(let prepared): job = prepared
        }
        let patience = request.integer(.patience).map { Duration.milliseconds(Int64(max($0, 0))) }
        let deadline = arrived + (patience ?? AgentClient.answerDeadline)
        let namespace = jobs.namespace(of: job)
        let lane = lanes.withLock { lanes in
            if let lane = lanes[namespace] { return lane }
            let lane = Lane()
            lanes[namespace] = lane
            return lane
        }
        let admitted = lane.waiting.withLock { waiting -> Bool in
            guard waiting < Self.maximumQueued else { return false }
            waiting += 1
            return true
        }
        guard admitted else {
            var declined = AgentMessage(.declined)
            declined.append(.text, "\(Self.maximumQueued) commands already wait for this namespace")
            try connection.send(declined, before: .now + Self.answerDeadline)
            return
        }
        let outcome = lane.queue.sync { () -> AgentJobOutcome? in
            defer { lane.waiting.withLock { $0 -= 1 } }
            guard let reason = startable(connection, deadline: deadline) else { return execute(job, in: lane) }
            log("dropped a request before running it: \(reason)")
            return nil
        }
        guard let outcome else { return }
        // What the command appended to its audit trails is written; it is made durable (and
        // anchored) once the client has its answer, so the client does not wait for the disk.
        // The agent counts the command as running until then, so it never stops in between.
        defer {
            for (path, error) in outcome.auditSync?.settle() ?? [] {
                log("an audit entry written to \(path) was not made durable after the answer: \(error)")
            }
            activity.withLock { $0.running -= 1 }
        }
        if outcome.needsPassphrase {
            try connection.send(AgentMessage(.needsPassphrase), before: .now + Self.answerDeadline)
            return
        }
        var answer = AgentMessage(.result)
        answer.append(.exitStatus, outcome.status)
        try send(Self.outputMessages(outcome.output) + [answer], on: connection)
    }

    /// The `output` messages of a command's output: what it wrote to one stream in a
    /// row goes in one message (of at most ``AgentMessage/outputChunkLength``), so
    /// `tok` and its newline are one message, and the client one `write`.
    static func outputMessages(_ output: [(stream: AgentOutputStream, bytes: SecretBytes)]) -> [AgentMessage] {
        var runs: [(stream: AgentOutputStream, parts: [SecretBytes])] = []
        for piece in output where !piece.bytes.isEmpty {
            if let last = runs.last, last.stream == piece.stream {
                runs[runs.count - 1].parts.append(piece.bytes)
            } else {
                runs.append((piece.stream, [piece.bytes]))
            }
        }
        return runs.flatMap { run in
            let tag: AgentMessage.Tag = run.stream == .output ? .standardOutput : .standardError
            let bytes = run.parts.count == 1 ? run.parts[0] : SecretBytes(concatenating: run.parts)
            return bytes.pieces(ofAtMost: AgentMessage.outputChunkLength).map { AgentMessage(.output, [(tag, $0)]) }
        }
    }

    /// Sends `messages` in order, as few `send` calls as fit in about one output chunk
    /// each: a short answer leaves in one write, and wakes its client once.
    private func send(_ messages: [AgentMessage], on connection: POSIX.LocalSocket) throws {
        var batch: [SecretBytes] = []
        var batchLength = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            let bytes = batch.count == 1 ? batch[0] : SecretBytes(concatenating: batch)
            batch.removeAll()
            batchLength = 0
            try connection.send(bytes, before: .now + Self.answerDeadline)
        }
        for message in messages {
            let encoded = try message.encoded()
            if batchLength + encoded.count > AgentMessage.outputChunkLength { try flush() }
            batch.append(encoded)
            batchLength += encoded.count
        }
        try flush()
    }

    /// Nil when the request at the front of its queue may run: its client still waits
    /// and was told `accepted`, and the agent is not stopping. Else why not. A stopping agent
    /// never says `accepted`: it tells the client `declined` (so the client runs the command
    /// itself), and one that says `accepted` counts the command as running first, so it runs
    /// before the agent stops.
    private func startable(_ connection: POSIX.LocalSocket, deadline: ContinuousClock.Instant) -> String? {
        guard ContinuousClock.now < deadline else { return "its client's patience ran out while it waited" }
        guard connection.pending() == .nothing else { return "its client hung up while it waited" }
        let started = activity.withLock { activity -> Bool in
            guard !activity.stopping else { return false }
            activity.running += 1
            return true
        }
        guard started else {
            // The client runs it in-process; one that no longer waits has nothing to be told.
            try? connection.send(DeclinedRequest("the agent is stopping").message, before: .now + Self.answerDeadline)
            return "the agent is stopping"
        }
        do {
            // Fails once the client stopped waiting (it shuts its reading down first): then it is not run here.
            try connection.send(AgentMessage(.accepted), before: .now + Self.answerDeadline)
        } catch {
            activity.withLock { $0.running -= 1 }
            return "its client stopped waiting (\(error))"
        }
        return nil
    }

    /// Checks a `run` request: the job, or the `declined` answer for another version or session bus.
    /// A refresh command the job needs runs in its client, asked on this connection.
    private func prepare(_ request: AgentMessage, on connection: POSIX.LocalSocket) throws -> Result<
        AgentJob, DeclinedRequest
    > {
        guard let arguments = request.texts(.argument), let variables = request.texts(.environment),
            let invokedAs = request.text(.invokedAs), let flags = request.value(.flags), flags.count == 1
        else {
            throw LatchkeyError(
                .invalidInput,
                "a run request without its arguments, environment, name or flags (or with text that is not UTF-8)")
        }
        guard request.text(.toolVersion) == jobs.toolVersion else {
            return .failure(DeclinedRequest("this agent runs latchkey \(jobs.toolVersion)"))
        }
        var environment: [String: String] = [:]
        for variable in variables {
            guard let equals = variable.firstIndex(of: "="),
                jobs.forwardedVariables.contains(String(variable[..<equals]))
            else {
                throw LatchkeyError(
                    .invalidInput, "a run request names an environment variable the agent does not take")
            }
            environment[String(variable[..<equals])] = String(variable[variable.index(after: equals)...])
        }
        guard environment["DBUS_SESSION_BUS_ADDRESS"] == POSIX.environmentValue("DBUS_SESSION_BUS_ADDRESS") else {
            return .failure(DeclinedRequest("the client is on another D-Bus session bus"))
        }
        guard let namespace = request.value(.namespace) else {
            throw LatchkeyError(.invalidInput, "a run request without its namespace")
        }
        let resolved = try ResolvedNamespace(decoding: namespace)
        let flagBits = flags.withUnsafeBytes { $0[0] }
        guard connection.takePassedDescriptors().isEmpty else {
            throw LatchkeyError(.invalidInput, "a run request passed descriptors; none are taken")
        }
        return .success(
            AgentJob(
                arguments: arguments, invokedAs: invokedAs, environment: environment, namespace: resolved,
                inputIsTerminal: flagBits & 1 == 1,
                standardInput: request.value(.standardInput), passphrase: request.value(.passphrase),
                client: ClientRefresh(connection)))
    }

    /// Runs a command for a client (counted as running from ``startable(_:deadline:)`` until
    /// its answer is sent and its audit appends are settled). Within the silence window
    /// after a command of its namespace missed the Secret Service deadline, it fails fast
    /// with that miss's error instead of waiting a deadline of its own (a command that does
    /// not use the Secret Service still runs); a miss opens the window, for as long as the
    /// deadline that was missed.
    private func execute(_ job: AgentJob, in lane: Lane) -> AgentJobOutcome {
        let silent = lane.silence.withLock { silence -> LatchkeyError? in
            guard let window = silence, ContinuousClock.now < window.until else {
                silence = nil
                return nil
            }
            return window.failure
        }
        let outcome = jobs.run(job, unlocked: unlocked, failingFastWith: silent)
        if outcome.failedFast {
            log("a command failed fast: its namespace's Secret Service missed a deadline moments ago")
        } else if let miss = outcome.missedDeadline {
            lane.silence.withLock { $0 = (ContinuousClock.now + miss.deadline, miss.failure) }
            log(
                "a command missed the Secret Service deadline (\(miss.deadline)); its namespace's queued commands fail fast for as long"
            )
        }
        // Keys derived for a passphrase that is not held (a policy that does not cache) go with the command.
        unlocked.keepOnlyHeldKeys()
        return outcome
    }
}

/// The `declined` answer to a request the agent will not run, with its reason.
private struct DeclinedRequest: Error {
    let message: AgentMessage

    init(_ reason: String) {
        var message = AgentMessage(.declined)
        message.append(.text, reason)
        self.message = message
    }
}

/// A UTC time as `2025-06-01T12:34:56Z`, for the log and `agent status`.
private func formatTime(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle())
}
