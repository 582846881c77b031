import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent against a stopped (SIGSTOP) and a locked gnome-keyring. They stop or lock the
/// test session's daemon, so they run only in `make test`'s pass of their own, alone on a
/// fresh bus and daemon (`LATCHKEY_DESTRUCTIVE_KEYRING_TESTS=1`), one after another.
@Suite(
    "latchkey agent: a stopped or locked Secret Service", .serialized, .sandboxed, .needsSecretService, .destroysKeyring
)
struct CLIAgentStoppedKeyringTests {
    /// The Secret Service deadline of the tests' policy.
    static let deadlineMilliseconds = 1500

    init() throws {
        try KeyringDaemon.ensureUnlocked()
    }

    /// A sandbox on the Secret Service, a policy with a short deadline (named on every
    /// command line), one session saved and the agent started.
    static func prepared(_ label: String = #function) throws -> (AgentSandbox, [String]) {
        let sandbox = try AgentSandbox("secret-service", label: label)
        let policy = sandbox.store.directory + "/deadline.json"
        try
            #"{"version": 1, "name": "short-deadline", "backend": {"secretServiceTimeoutMilliseconds": \#(deadlineMilliseconds)}}"#
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let options = ["--policy", policy]
        let put = try sandbox.run(options + ["session", "put", "api"], input: "token-one\n")
        #expect(put.status == 0, "\(put.stderr)")
        // Gets through the agent, so that its kept backend follows the bus and reads a known
        // item in one call (docs/SECRET-SERVICE.md): what the comparisons then start from.
        for _ in 0..<3 {
            #expect(try sandbox.run(options + ["session", "get", "api"]).text == "token-one\n")
        }
        #expect(try sandbox.agentProcessID() != nil)
        return (sandbox, options)
    }

    /// Runs `body` with the daemon stopped, and lets it go on afterwards, whatever happens.
    static func whileStopped<T>(_ body: () throws -> T) throws -> T {
        let pid = try KeyringDaemon.pid()
        #expect(kill(pid, SIGSTOP) == 0)
        defer { kill(pid, SIGCONT) }
        return try body()
    }

    /// The audit entries of the sandbox's Secret Service trail, without what differs from
    /// one entry to the next whoever wrote it (sequence number, time, chain MAC).
    static func auditEntries(_ sandbox: AgentSandbox, _ options: [String]) throws -> [[String: String]] {
        let shown = try sandbox.run(options + ["--json", "audit", "show"], agent: false)
        let entries = try #require(try shown.json()["entries"] as? [[String: Any]], "\(shown.stderr)")
        return entries.map { entry in
            var kept: [String: String] = [:]
            for (key, value) in entry where !["seq", "sequence", "time", "mac", "previousMac"].contains(key) {
                kept[key] = "\(value)"
            }
            return kept
        }
    }

    @Test("commands queued behind a missed deadline fail fast, with the timeout's status and message")
    func queuedFailFast() throws {
        let (sandbox, options) = try Self.prepared()
        let count = 6
        let (runs, elapsed) = try Self.whileStopped {
            let start = ContinuousClock.now
            let children = try (0..<count).map { _ in
                try Child(
                    latchkeyPath(), sandbox.store.options + options + ["session", "get", "api"],
                    environment: sandbox.environment)
            }
            let runs = try children.map { try $0.finish() }
            return (runs, ContinuousClock.now - start)
        }
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        for run in runs {
            #expect(run.status == 75, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        // Every queued one says what the one that waited said: the service did not answer in time.
        #expect(Set(runs.map(\.stderr)).count == 1, "\(runs.map(\.stderr))")
        let missed = log.components(separatedBy: "missed the Secret Service deadline").count - 1
        let failedFast = log.components(separatedBy: "failed fast").count - 1
        #expect(missed >= 1 && failedFast >= 1 && missed + failedFast == count, "\(log)")
        // One after another, each waiting its own deadline, they would take `count` deadlines.
        #expect(elapsed < .milliseconds(Self.deadlineMilliseconds * count), "took \(elapsed)")
        // Once the window has passed, the service is asked again.
        #expect(
            try sandbox.eventually(10) { try sandbox.run(options + ["session", "get", "api"]).text == "token-one\n" })
    }

    /// Runs `arguments` in-process, then through the agent, and returns both runs and
    /// the audit entries each added.
    static func bothModes(
        _ sandbox: AgentSandbox, _ options: [String], _ arguments: [String], between: () throws -> Void = {}
    ) throws -> (
        inProcess: Run, viaAgent: Run, inProcessEntries: [[String: String]], viaAgentEntries: [[String: String]]
    ) {
        let before = try auditEntries(sandbox, options)
        let inProcess = try sandbox.run(options + arguments, agent: false)
        let middle = try auditEntries(sandbox, options)
        try between()
        let viaAgent = try sandbox.run(options + arguments)
        let after = try auditEntries(sandbox, options)
        return (
            inProcess, viaAgent, Array(middle.dropFirst(before.count)), Array(after.dropFirst(middle.count))
        )
    }

    @Test(
        "a command on a stopped Secret Service prints, exits and audits the same in-process and through the agent",
        arguments: [["session", "get", "api"], ["session", "put", "other"], ["--json", "status"]])
    func stoppedSameInBothModes(_ arguments: [String]) throws {
        let (sandbox, options) = try Self.prepared()
        let input = arguments.contains("put") ? "token-two\n" : ""
        let before = try Self.auditEntries(sandbox, options)
        let (inProcess, viaAgent) = try Self.whileStopped {
            let inProcess = try sandbox.run(options + arguments, input: input, agent: false)
            // The agent's call must not meet a silence the in-process run began: a deadline apart.
            Thread.sleep(forTimeInterval: Double(Self.deadlineMilliseconds) / 1000 + 0.2)
            let viaAgent = try sandbox.run(options + arguments, input: input)
            return (inProcess, viaAgent)
        }
        #expect(inProcess.status == viaAgent.status, "\(inProcess.stderr) | \(viaAgent.stderr)")
        #expect(inProcess.text == viaAgent.text)
        #expect(inProcess.stderr == viaAgent.stderr)
        // The trail can be read once the daemon answers again: each run added the same entries.
        let added = Array(try Self.auditEntries(sandbox, options).dropFirst(before.count))
        #expect(added.count % 2 == 0, "\(added)")
        #expect(Array(added.prefix(added.count / 2)) == Array(added.suffix(added.count / 2)), "\(added)")
    }

    @Test(
        "with unlock: prompt, a stopped Secret Service fails at the call deadline, not the unlock prompt's, in both modes, and answers again after SIGCONT"
    )
    func stoppedWithUnlockPrompt() throws {
        let (sandbox, _) = try Self.prepared()
        // The prompt's own deadline is longer than GDBus's 25 s default: a check of the
        // collection made under it would end in GDBus's "Timeout was reached".
        let policy = sandbox.store.directory + "/prompt.json"
        try
            #"{"version": 1, "name": "prompt", "backend": {"secretServiceTimeoutMilliseconds": \#(Self.deadlineMilliseconds)}, "secretService": {"unlock": "prompt", "unlockTimeoutSeconds": 30}}"#
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let get = ["--policy", policy, "session", "get", "api"]
        let (inProcess, viaAgent) = try Self.whileStopped {
            let inProcess = try sandbox.run(get, agent: false)
            Thread.sleep(forTimeInterval: Double(Self.deadlineMilliseconds) / 1000 + 0.2)
            return (inProcess, try sandbox.run(get))
        }
        for run in [inProcess, viaAgent] {
            #expect(run.status == 75, "\(run.stderr)")
            #expect(run.stderr.contains("did not answer within the deadline"), "\(run.stderr)")
        }
        #expect(inProcess.stderr == viaAgent.stderr)
        // Once the daemon answers again, so does the agent (its connection is not left broken).
        Thread.sleep(forTimeInterval: Double(Self.deadlineMilliseconds) / 1000 + 0.2)
        let after = try sandbox.run(get)
        #expect(after.status == 0, "\(after.stderr)")
        #expect(after.text == "token-one\n")
    }

    @Test(
        "a command on a locked collection prints, exits and audits the same in-process and through the agent",
        arguments: [["session", "get", "api"], ["session", "list"], ["--json", "status"]])
    func lockedSameInBothModes(_ arguments: [String]) throws {
        let (sandbox, options) = try Self.prepared()
        try KeyringDaemon.lockLogin()
        defer { try? KeyringDaemon.ensureUnlocked() }
        let runs = try Self.bothModes(sandbox, options, arguments)
        #expect(runs.inProcess.status == runs.viaAgent.status, "\(runs.inProcess.stderr) | \(runs.viaAgent.stderr)")
        #expect(runs.inProcess.text == runs.viaAgent.text)
        #expect(runs.inProcess.stderr == runs.viaAgent.stderr)
        #expect(runs.inProcessEntries == runs.viaAgentEntries)
    }

    @Test("status never raises the unlock prompt, with a display too, in both modes: it reports and says how to unlock")
    func statusNeverPrompts() throws {
        let (sandbox, options) = try Self.prepared()
        try KeyringDaemon.lockLogin()
        defer { try? KeyringDaemon.ensureUnlocked() }
        // A prompt raised on this bus ends dismissed at once (its prompter has no display), and says so.
        for agent in [false, true] {
            let status = try sandbox.run(
                options + ["status"], agent: agent, extra: ["DISPLAY": ":4711", "WAYLAND_DISPLAY": nil])
            #expect(status.status == 75, "agent \(agent): \(status.stderr)")
            #expect(!status.text.contains("prompt was dismissed"), "agent \(agent): \(status.text)")
            #expect(status.text.contains("why: the Secret Service collection holding the items is locked"))
            #expect(status.text.contains("unlock: prompt (a graphical session is present)"), "\(status.text)")
            #expect(status.text.contains("status never raises the keyring's unlock prompt"), "\(status.text)")
        }
    }

    @Test("through the agent, the client's DISPLAY decides the unlock mode and the agent asks the provider")
    func unlockModeFromClient() throws {
        let (sandbox, options) = try Self.prepared()
        try KeyringDaemon.lockLogin()
        defer { try? KeyringDaemon.ensureUnlocked() }
        let headless = try sandbox.run(options + ["status"], extra: ["DISPLAY": nil, "WAYLAND_DISPLAY": nil])
        #expect(headless.status == 75, "\(headless.stderr)")
        #expect(headless.text.contains("unlock: never (no graphical session)"), "\(headless.text)")
        // The client says a display is there; the agent, started without one, asks gnome-keyring to
        // unlock, whose prompter has no display on this bus, so the prompt ends dismissed.
        let graphical = try sandbox.run(
            options + ["session", "get", "api"], extra: ["DISPLAY": ":4711", "WAYLAND_DISPLAY": nil])
        #expect(graphical.status == 75, "\(graphical.stderr)")
        #expect(graphical.stderr.contains("unlock prompt was dismissed"), "\(graphical.stderr)")
        let status = try sandbox.run(options + ["status"], extra: ["DISPLAY": ":4711", "WAYLAND_DISPLAY": nil])
        #expect(status.text.contains("unlock: prompt (a graphical session is present)"), "\(status.text)")
    }
}
