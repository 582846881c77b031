import Foundation
import Synchronization
import Testing

@testable import LatchkeyTestSupport

/// What a test leaves behind: an agent a command started on demand ends with the
/// test that started it (its `TestSandbox`), and so does a child still running;
/// the test's directories go, however the test ends.
@Suite("Tests leave no agent, process or directory behind", .sandboxed)
struct CLIAgentCleanupTests {
    /// The process id of the agent serving `runtime`, from `agent status`; nil when none answers.
    static func agent(in runtime: String) throws -> pid_t? {
        let status = try latchkey(["--json", "agent", "status"], environment: ["XDG_RUNTIME_DIR": runtime])
        guard status.status == 0 else { return nil }
        return (try status.json()["pid"] as? NSNumber)?.int32Value
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }

    /// A command that stores a session through the agent (started on demand) of the running test's sandbox.
    static func startAgent() throws -> (runtime: String, agent: pid_t) {
        let sandbox = try TestSandbox.required(for: "startAgent")
        let store = try sandbox.directory("store")
        let put = try latchkey(
            ["--backend", "file", "--store-dir", store, "--app", "cleanup-test", "session", "put", "api"],
            input: "token", environment: ["LATCHKEY_AGENT": nil])
        #expect(put.status == 0, "\(put.stderr)")
        let runtime = try sandbox.runtimeDirectory()
        return (runtime, try #require(try agent(in: runtime)))
    }

    @Test("an agent started by a command whose caller blocks SIGTERM does not block it, and SIGTERM ends it")
    func agentTakesSigterm() throws {
        let store = try freshDirectory("store")
        // The caller blocks SIGTERM (as the test runner's threads do), then runs the command.
        let blocking = """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            os.execv(sys.argv[1], sys.argv[1:])
            """
        let put = try runProgram(
            "python3",
            ["-c", blocking, try latchkeyPath(), "--backend", "file", "--store-dir", store, "--app", "sigterm-test"]
                + ["session", "put", "api"],
            input: "token", environment: ["LATCHKEY_AGENT": nil])
        #expect(put.status == 0, "\(put.stderr)")
        let pid = try #require(try Self.agent(in: try TestSandbox.required(for: "this test").runtimeDirectory()))
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let blocked = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
        let mask = try #require(UInt64(blocked.split(separator: "\t").last ?? "", radix: 16))
        #expect(mask & (1 << (UInt64(SIGTERM) - 1)) == 0, "the agent blocks SIGTERM: \(blocked)")
        kill(pid, SIGTERM)
        #expect(Self.eventually(3) { !ProcessTable.isRunning(pid) }, "SIGTERM did not end the agent")
    }

    @Test(
        "ending a sandbox ends the agent a command started in it and a child still running, and removes its directory")
    func endingASandbox() throws {
        let sandbox = TestSandbox(name: "nested")
        let (runtime, agent, child) = try TestSandbox.$current.withValue(sandbox) {
            let (runtime, agent) = try Self.startAgent()
            return (runtime, agent, try Child("/bin/sleep", ["60"]))
        }
        #expect(ProcessTable.isRunning(agent) && child.process.isRunning)
        #expect(sandbox.end() == [])
        #expect(!ProcessTable.isRunning(agent), "the agent still runs")
        #expect(!child.process.isRunning, "the child still runs")
        #expect(!FileManager.default.fileExists(atPath: runtime), "the sandbox's directory is still there")
    }

    /// An error a test throws.
    struct Thrown: Error {}

    @Test("a test that throws or fails still has its agent ended and its directories removed")
    func endsHoweverTheTestEnds() async throws {
        let test = try #require(Test.current)
        for throwing in [true, false] {
            let left = Mutex<(runtime: String, agent: pid_t)?>(nil)
            var thrown: (any Error)?
            do {
                try await SandboxTrait().provideScope(for: test, testCase: Test.Case.current) {
                    left.withLock { $0 = try? Self.startAgent() }
                    if throwing { throw Thrown() }
                }
            } catch {
                thrown = error
            }
            #expect((thrown is Thrown) == throwing, "\(String(describing: thrown))")
            let (runtime, agent) = try #require(left.withLock { $0 })
            #expect(!ProcessTable.isRunning(agent), "throwing \(throwing): the agent still runs")
            #expect(
                !FileManager.default.fileExists(atPath: runtime), "throwing \(throwing): the directory is still there")
        }
    }

    @Test("a fresh directory outside any sandbox is refused, naming the trait")
    func outsideASandbox() {
        TestSandbox.$current.withValue(nil) {
            let error = #expect(throws: TestSupportError.self) { try freshDirectory() }
            #expect(error?.description.contains(".sandboxed") == true, "\(String(describing: error))")
        }
    }
}
