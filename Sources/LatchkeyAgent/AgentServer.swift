import Latchkey
import LatchkeySystem
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
/// it itself). It keeps each namespace's vault open between commands, with the
/// passphrase that opened it (``VaultPool``); every operation of a kept vault still
/// works under the files' locks and sees what other processes did, so processes using
/// the library directly and the agent never corrupt each other. What a request runs
/// is the store commands' (``StoreCommandRunner``, through its ``Executor``): the agent
/// knows its protocol, its queues and its pool, not the commands.
///
/// Its parts, one file each: listener and admission (`AgentServer+Admission.swift`: the
/// accepting threads, the uid check, the connection caps), the connection
/// (`AgentServer+Connection.swift`: a request read under its deadline, answers sent under
/// theirs), the namespace lane (``AgentLane`` and `AgentServer+Lane.swift`: the queue bound,
/// dropping a stale request, `accepted`), the vault pool (``VaultPool``: kept vaults,
/// passphrases, silence windows, deferred audit appends), what a request runs
/// (`AgentServer+Jobs.swift`, the one place a command is run) and the lifecycle
/// (`AgentServer+Lifecycle.swift`: serving, idle exit, the socket file's watch, stopping,
/// status). Every deadline and wait is measured by its clock (``POSIX/DeadlineClock``),
/// the continuous clock in the agent and a manual one in its unit tests.
package final class AgentServer: Sendable {
    /// The server's deadlines and caps (docs/AGENT.md, "Limits").
    package struct Limits: Sendable {
        /// How long a client has to send its whole request once connected.
        package var requestDeadline: Duration = .seconds(2)
        /// How long a client has to take the answer.
        package var answerDeadline: Duration = .seconds(5)
        /// How many connections may be open at once (every peer is this user: others are
        /// refused as they are accepted, before they take a slot or a thread).
        package var maximumConnections = 256
        /// How many of them one process may hold, so one process holding many (idle, or
        /// reconnecting as each is dropped) never keeps the others out.
        package var maximumConnectionsPerProcess = 32
        /// How many commands may wait for (or run in) one namespace; more are declined (and run in-process).
        package var maximumQueued = 32

        /// The agent's limits.
        package init() {}
    }

    /// Where a server listens, and what it owns there; nil for a server its connections are
    /// handed to (``take(_:peer:)``).
    struct Endpoint: Sendable {
        let runtime: AgentRuntimeDirectory
        let listener: POSIX.LocalSocket
        let lock: AgentLock
        /// The socket file's identity when this agent made it; nil for a socket a service manager passed.
        let ownSocket: [UInt64]?
    }

    let limits: Limits
    let clock: POSIX.DeadlineClock
    let endpoint: Endpoint?
    let idleExit: Duration
    /// What runs the commands clients send.
    let executor: Executor
    /// The log: rate-limited by kind, and capped in `agent.log`.
    let logger: AgentLog
    let started = Date()
    /// The namespaces' open vaults, passphrases and silence windows.
    let vaults: VaultPool
    /// What ends the process once the server stopped (`exit`), with its status; a test's
    /// server records it instead.
    let ending: @Sendable (Int32) -> Void
    /// The last time a connection came or ended, how many are open (in all and by peer
    /// process), how many commands run, and whether it stops.
    let activity: Mutex<Activity>

    struct Activity {
        var last: ContinuousClock.Instant
        var open = 0
        var openByProcess: [Int32: Int] = [:]
        var running = 0
        var stopping = false
        /// Whether it stopped (``ending`` was called).
        var stopped = false
    }
    /// How many threads wait for a connection (in `accept`); one that served a connection
    /// waits again only while fewer than ``spareThreads`` do, and ends otherwise.
    let waitingThreads = Mutex(0)
    /// How many threads may wait for connections between requests, kept so that a request
    /// does not start a thread.
    static let spareThreads = 4
    /// Each namespace's lane, by store directory and app.
    let lanes = Mutex<[String: AgentLane]>([:])

    init(
        endpoint: Endpoint?, idleExit: Duration, executor: Executor, logger: AgentLog,
        clock: POSIX.DeadlineClock, limits: Limits, ending: @escaping @Sendable (Int32) -> Void
    ) {
        self.endpoint = endpoint
        self.idleExit = idleExit
        self.executor = executor
        self.logger = logger
        self.clock = clock
        self.limits = limits
        self.ending = ending
        activity = Mutex(Activity(last: clock.now()))
        vaults = VaultPool(now: clock.now)
    }

    /// A server without a socket of its own: its connections are handed to it (``take(_:peer:)``),
    /// and it stops by calling `ending` instead of ending the process. The agent's unit tests
    /// serve it over socketpairs with a manual clock.
    /// - Parameters:
    ///   - clock: What its deadlines, idle exit, silence windows and patience are measured by.
    ///   - limits: Its deadlines and caps.
    ///   - idleExit: How long it waits without a connection before it stops.
    ///   - executor: What runs the commands clients send (the store commands, or a test's own).
    ///   - log: What takes each line it logs.
    ///   - ending: Called once, with the exit status, when it stopped.
    package convenience init(
        clock: POSIX.DeadlineClock, limits: Limits, idleExit: Duration, executor: Executor = .storeCommands,
        log: @escaping @Sendable (String) -> Void, ending: @escaping @Sendable (Int32) -> Void
    ) {
        self.init(
            endpoint: nil, idleExit: idleExit, executor: executor, logger: AgentLog(path: nil, sink: log), clock: clock,
            limits: limits, ending: ending)
    }

    func log(_ text: String) {
        logger.write(text)
    }

    /// How many connections are open, and how many commands run (counted from `accepted`
    /// until their answer is sent and their audit appends are settled).
    package var load: (connections: Int, running: Int) {
        activity.withLock { ($0.open, $0.running) }
    }

    /// An `information` answer of `lines`.
    func information(_ lines: [String]) -> AgentMessage {
        AgentMessage(.information, lines.map { (.line, SecretBytes(utf8: $0)) })
    }
}

/// The `declined` answer to a request the agent will not run, with its reason.
struct DeclinedRequest: Error {
    let message: AgentMessage

    init(_ reason: String) {
        var message = AgentMessage(.declined)
        message.append(.text, reason)
        self.message = message
    }
}

/// A UTC time as `2025-06-01T12:34:56Z`, for the log and `agent status`.
func formatTime(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle())
}
