import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeySystem
import Synchronization

/// A clock that moves only when the test moves it (``advance(by:)``): the server's
/// deadlines, idle exit, silence windows and patience are measured by it.
final class ManualClock: Sendable {
    private let current = Mutex(ContinuousClock.now)
    private let readings = Atomic(0)

    /// The current instant.
    var now: ContinuousClock.Instant { current.withLock { $0 } }

    /// How many times the server read the time: it reads it every 2 ms while it waits on a socket.
    var timesRead: Int { readings.load(ordering: .sequentiallyConsistent) }

    /// Moves the time on by `duration`.
    func advance(by duration: Duration) {
        current.withLock { $0 = $0 + duration }
    }

    /// The clock a server takes: a sleep lasts until the test has moved the time on that
    /// far, and a wait for a socket reads the time again every 2 ms of real time.
    var deadlineClock: POSIX.DeadlineClock {
        POSIX.DeadlineClock(
            now: {
                self.readings.add(1, ordering: .sequentiallyConsistent)
                return self.now
            },
            sleep: { duration in
                let end = self.now + duration
                while self.now < end { POSIX.sleep(.milliseconds(1)) }
            }, longestWait: .milliseconds(2))
    }
}

/// The server's executor in these tests (``AgentServer/Executor``): its commands are
/// `secret get NAME` in the namespace of app NAMESPACE. It records what it ran (and whether it was told to fail fast), and
/// its commands do what their name says: `hold` runs until ``release(_:)`` lets the
/// namespace's hold go, `miss` (after such a hold too, when held) fails as a command that
/// missed the Secret Service's 3 s deadline (the built-in default policy's), `big` writes
/// 2 MiB; the others write their name. Told to fail fast, a command asks its vault source
/// for its vault, as a store command does, and fails with the error it is refused with.
final class RecordingExecutor: Sendable {
    /// The deadline a `miss` missed: the built-in default policy's Secret Service deadline.
    static let missedDeadline: Duration = .seconds(3)
    /// The exit status of a command that failed fast (the missed deadline's error, `.timedOut`).
    static let failedFastStatus: Int32 = 75

    private let runs = Mutex<[(name: String, failingFast: Bool)]>([])
    private let received = Mutex<[StoreRequest]>([])
    private let ends = Mutex<[String]>([])
    private let held = Mutex<Set<String>>([])

    /// What ran, in the order it started: each command's name, and whether it was told to fail fast.
    var ran: [(name: String, failingFast: Bool)] { runs.withLock { $0 } }

    /// The typed requests the executor was given, in the order they started.
    var requests: [StoreRequest] { received.withLock { $0 } }

    /// The names of the commands that ran, in order.
    var names: [String] { ran.map(\.name) }

    /// The names of the commands that returned their result, in order.
    var finished: [String] { ends.withLock { $0 } }

    /// Holds every `hold` (and `miss`) of `namespace` until ``release(_:)``.
    func hold(_ namespace: String) {
        _ = held.withLock { $0.insert(namespace) }
    }

    /// Lets the holds of `namespace` go.
    func release(_ namespace: String) {
        _ = held.withLock { $0.remove(namespace) }
    }

    /// The name of the job's command (`secret get NAME`).
    static func name(of job: AgentJob) -> String {
        guard case .secretGet(let name, _) = job.request.command else { return "" }
        return name
    }

    /// The executor the server takes.
    var executor: AgentServer.Executor {
        AgentServer.Executor { job, vaults in self.run(job, vaults: vaults) }
    }

    private func run(_ job: AgentJob, vaults: AgentVaultSource) -> StoreRunResult {
        let namespace = job.namespace.app
        let name = Self.name(of: job)
        runs.withLock { $0.append((name, vaults.failingFast != nil)) }
        received.withLock { $0.append(job.request) }
        defer { ends.withLock { $0.append(name) } }
        if vaults.failingFast != nil {
            do {
                _ = try vaults.vault(for: job.namespace, passphrase: nil, unlocking: true)
            } catch {
                return StoreRunResult(
                    status: Self.failedFastStatus, output: [(.error, SecretBytes(utf8: "failed fast\n"))],
                    failure: error as? LatchkeyError, passphrasePrompt: nil)
            }
        }
        if name == "hold" || name == "miss" {
            while held.withLock({ $0.contains(namespace) }) { POSIX.sleep(.milliseconds(1)) }
        }
        if name == "miss" {
            return StoreRunResult(
                status: 69, output: [(.error, SecretBytes(utf8: "timed out\n"))],
                failure: LatchkeyError(.timedOut, "the Secret Service did not answer"), passphrasePrompt: nil)
        }
        let output =
            name == "big" ? SecretBytes([UInt8](repeating: 0x61, count: 2 << 20)) : SecretBytes(utf8: name + "\n")
        return StoreRunResult(status: 0, output: [(.output, output)], failure: nil, passphrasePrompt: nil)
    }
}

/// A server served over socketpairs with a manual clock, and what it logged and how it ended.
final class ServerUnderTest: Sendable {
    let clock = ManualClock()
    let runner: RecordingExecutor
    let server: AgentServer
    private let lines: Recording<String>
    private let endings: Recording<Int32>
    /// The next process id a client of its own is given.
    private let nextProcess = Mutex<Int32>(100_000)

    /// A server whose commands the test's ``RecordingExecutor`` runs, or, with `storeCommands`,
    /// the store commands themselves.
    init(
        limits: AgentServer.Limits = AgentServer.Limits(), idleExit: Duration = .seconds(3600),
        storeCommands: Bool = false
    ) {
        let lines = Recording<String>()
        let endings = Recording<Int32>()
        let runner = RecordingExecutor()
        self.runner = runner
        self.lines = lines
        self.endings = endings
        server = AgentServer(
            clock: clock.deadlineClock, limits: limits, idleExit: idleExit,
            executor: storeCommands ? .storeCommands : runner.executor,
            log: { lines.append($0) },
            ending: { endings.append($0) })
    }

    /// What the server logged.
    var log: [String] { lines.values }

    /// Whether it logged a line containing `text`.
    func logged(_ text: String) -> Bool { log.contains { $0.contains(text) } }

    /// The exit statuses it ended with (once, when it stopped).
    var ended: [Int32] { endings.values }

    /// A client connected over a socketpair, as the process `process` (by default one of its
    /// own) of this user, or of `user`.
    func connect(process: Int32? = nil, user: UInt32 = POSIX.effectiveUserID) throws -> TestClient {
        let (ours, theirs) = try POSIX.LocalSocket.pair(named: "test socketpair")
        let process =
            process
            ?? nextProcess.withLock { next in
                defer { next += 1 }
                return next
            }
        try server.take(theirs, peer: (process, user))
        return TestClient(socket: ours)
    }
}

/// Values recorded from any thread, in order.
final class Recording<Value: Sendable>: Sendable {
    private let recorded = Mutex<[Value]>([])

    /// What was recorded.
    var values: [Value] { recorded.withLock { $0 } }

    /// Records `value`.
    func append(_ value: Value) {
        recorded.withLock { $0.append(value) }
    }
}

/// The client's end of a connection to the server under test.
struct TestClient {
    let socket: POSIX.LocalSocket

    /// Sends a `run` request of `name` in `namespace`, as the CLI's client does; with `patience`,
    /// how long it waits for the agent to start it.
    func run(_ name: String, in namespace: String, patience: Duration? = nil) throws {
        try send(Self.runRequest(.secretGet(name: name, noNewline: false), in: namespace, patience: patience))
    }

    /// A `run` request of `command` in `namespace` (of that app), as the CLI's client makes one.
    static func runRequest(_ command: StoreCommand, json: Bool = false, in namespace: String, patience: Duration? = nil)
        throws -> AgentMessage
    {
        try runRequest(command, json: json, namespace: Self.namespace(namespace), patience: patience)
    }

    /// The namespace of app `app` these tests' requests work in (in store `/store`).
    static func namespace(_ app: String) -> ResolvedNamespace {
        ResolvedNamespace(
            storeDirectory: "/store", app: app, policy: "built-in:default", backend: nil, sessionUnlock: "never")
    }

    /// The queue of app `app`'s namespace in the server.
    static func queue(_ app: String) -> String { namespace(app).queueKey }

    /// A `run` request of `command` in `namespace`, as the CLI's client makes one.
    static func runRequest(
        _ command: StoreCommand, json: Bool = false, namespace: ResolvedNamespace, patience: Duration? = nil
    ) throws -> AgentMessage {
        var request = AgentMessage(.run)
        request.append(.toolVersion, ToolVersion.current)
        request.fields.append(
            (.command, try StoreRequest(command: command, json: json).encoded()))
        request.fields.append((.namespace, try namespace.encoded()))
        if let bus = POSIX.environmentValue("DBUS_SESSION_BUS_ADDRESS") { request.append(.sessionBus, bus) }
        if let patience { request.append(.patience, Int32(patience / .milliseconds(1))) }
        return request
    }

    /// Sends `message`.
    func send(_ message: AgentMessage) throws {
        try socket.send(message, before: .now + .seconds(5))
    }

    /// The next message, waiting at most 5 s of real time; nil when the server closed the connection.
    func next() throws -> AgentMessage? {
        try socket.receiveMessage(before: .now + .seconds(5))?.message
    }

    /// Every message until the server closes the connection (or breaks a message off).
    func rest() -> [AgentMessage] {
        var messages: [AgentMessage] = []
        while let message = try? next() { messages.append(message) }
        return messages
    }

    /// Whether the server closed the connection, waiting for it at most 5 s of real time.
    func isClosedByServer() -> Bool {
        eventually { socket.pending() == .closed }
    }
}

/// Whether `condition` holds within `seconds` of real time (checked every millisecond).
func eventually(within seconds: Int64 = 5, _ condition: () -> Bool) -> Bool {
    let end = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < end {
        if condition() { return true }
        POSIX.sleep(.milliseconds(1))
    }
    return condition()
}

/// Whether `condition` still holds after 100 ms of real time (it held all along when it
/// is a state that, once left, is never entered again).
func stillHolds(_ condition: () -> Bool) -> Bool {
    POSIX.sleep(.milliseconds(100))
    return condition()
}

extension AgentMessage {
    /// Its `text` field.
    var reason: String? { text(.text) }
}
