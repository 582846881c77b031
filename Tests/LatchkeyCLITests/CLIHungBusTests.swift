import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

/// A session bus that stopped answering (its `dbus-daemon` stopped with SIGSTOP): the
/// policy's Secret Service deadline bounds the whole command, in-process and through the agent.
@Suite("a hung session bus", .sandboxed)
struct CLIHungBusTests {
    /// The Secret Service deadline of the tests' policy.
    static let deadlineMilliseconds = 200

    @Test("status on a hung session bus ends within the Secret Service deadline (and start-up), in both modes")
    func statusBounded() throws {
        let sandbox = try AgentSandbox("secret-service")
        let bus = sandbox.store.directory + "/bus"
        let daemon = try Child(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address", "--address=unix:path=\(bus)"])
        #expect(sandbox.eventually(10) { FileManager.default.fileExists(atPath: bus) }, "the bus starts")
        let policy = sandbox.store.directory + "/deadline.json"
        try
            #"{"version": 1, "name": "short-deadline", "backend": {"secretServiceTimeoutMilliseconds": \#(Self.deadlineMilliseconds)}}"#
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let onBus: [String: String?] = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(bus)"]
        // The agent is on the same bus as its clients (it declines any other), started before the bus hangs.
        let shell = try runProgram(
            "sh", ["-c", #""$0" "$@" agent run </dev/null >/dev/null 2>&1 &"#, try latchkeyPath(), "--policy", policy],
            environment: sandbox.environment.merging(onBus) { $1 })
        #expect(shell.status == 0, "\(shell.stderr)")
        #expect(sandbox.awaitAgent() != nil, "the agent answers")
        #expect(kill(daemon.process.processIdentifier, SIGSTOP) == 0)
        defer { kill(daemon.process.processIdentifier, SIGCONT) }
        for agent in [false, true] {
            let start = ContinuousClock.now
            let status = try sandbox.run(["--policy", policy, "--json", "status"], agent: agent, extra: onBus)
            let elapsed = ContinuousClock.now - start
            #expect(status.status == 75, "agent \(agent): \(status.stderr)")
            #expect(try status.json()["usable"] as? Bool == false, "agent \(agent): \(status.text)")
            #expect(status.stderr.contains("not using the agent") == false, "agent \(agent): \(status.stderr)")
            // One deadline of waiting on the bus, plus starting the process; a second lookup of
            // the provider (1 s of its own) was what took it past a second.
            #expect(elapsed < .milliseconds(Self.deadlineMilliseconds + 800), "agent \(agent): took \(elapsed)")
        }
    }
}
