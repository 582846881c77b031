import Foundation
import Glibc
import LatchkeyAgent
import LatchkeySystem
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("latchkey agent: edges", .sandboxed)
struct CLIAgentEdgeTests {
    /// Runs `latchkey` with the sandbox's store options under `sh -c`, with `redirection` applied.
    static func shell(_ sandbox: AgentSandbox, agent: Bool, _ arguments: [String], redirection: String) throws -> Run {
        let command = try ([latchkeyPath()] + sandbox.store.options + arguments).map { "'\($0)'" }
            .joined(separator: " ")
        let environment = agent ? "" : "LATCHKEY_AGENT=off "
        return try runProgram(
            "sh", ["-c", "\(environment)exec \(command) \(redirection)"], environment: sandbox.environment)
    }

    @Test(
        "closed standard output is exit 74 and closed standard error changes nothing, through the agent as in-process")
    func closedStreams() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "token").status == 0)
        for agent in [true, false] {
            let noOutput = try Self.shell(sandbox, agent: agent, ["session", "get", "api"], redirection: ">&-")
            #expect(noOutput.status == 74, "agent \(agent): \(noOutput.stderr)")
            #expect(noOutput.stderr.contains("standard output"), "agent \(agent): \(noOutput.stderr)")
            let noErrors = try Self.shell(sandbox, agent: agent, ["session", "get", "api"], redirection: "2>&-")
            #expect(noErrors.status == 0 && noErrors.text == "token\n", "agent \(agent)")
            let missing = try Self.shell(sandbox, agent: agent, ["session", "get", "nothing"], redirection: "2>&-")
            #expect(missing.status == 1, "agent \(agent)")
            let noInput = try Self.shell(sandbox, agent: agent, ["session", "put", "other"], redirection: "<&-")
            #expect(noInput.status == 74, "agent \(agent): \(noInput.stderr)")
        }
        #expect(try sandbox.run(["session", "get", "other"], agent: false).status == 1, "no put without input")
    }

    @Test("an answer larger than one message is delivered whole, and the command runs once")
    func largeAnswer() throws {
        let sandbox = try AgentSandbox()
        // 1 MiB of control bytes: each one is six in JSON, so the document is 6 MiB.
        let token = String(repeating: "\u{01}", count: 1 << 20 - 1)
        #expect(try sandbox.run(["session", "put", "big"], input: token).status == 0)
        let viaAgent = try sandbox.run(["--json", "session", "get", "big"])
        let inProcess = try sandbox.run(["--json", "session", "get", "big"], agent: false)
        #expect(viaAgent.status == 0 && viaAgent.stdout.count > 6_000_000, "\(viaAgent.stderr)")
        #expect(viaAgent.stdout == inProcess.stdout)
        let shown = try sandbox.run(["audit", "show"], agent: false).text
        #expect(shown.components(separatedBy: "session.read").count - 1 == 2, "one read each way")
    }

    @Test("a --json logout of 800 sessions through the agent reports 800, and the trail has one logout entry")
    func largeLogout() throws {
        let sandbox = try AgentSandbox()
        let padding = String(repeating: "\u{01}", count: 240)
        let vault = try Vault.open(
            appID: AppID(sandbox.store.app), storeDirectory: sandbox.store.storeDirectory, backend: .file)
        for index in 0..<800 {
            _ = try vault.saveSession(SecretBytes(utf8: "t"), name: padding + "\(index)", account: padding + "\(index)")
        }
        let logout = try sandbox.run(["--json", "logout"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect((try logout.json()["wipedSessions"] as? [Any])?.count == 800)
        let shown = try sandbox.run(["audit", "show"], agent: false).text
        #expect(shown.components(separatedBy: "logout").count - 1 == 1, "\(shown.suffix(400))")
    }

    @Test("an agent started with JOURNAL_STREAM that does not name its standard error logs to agent.log")
    func journalStreamChecked() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "list"], extra: ["JOURNAL_STREAM": "8:12345"]).status == 0)
        #expect(try sandbox.agentProcessID() != nil)
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(log.contains(": serving "), "\(log)")
    }

    @Test("a socket passed in LISTEN_FDS that is not a listening Unix stream socket (TCP) is refused")
    func tcpListenFDsRefused() throws {
        let sandbox = try AgentSandbox()
        try FileManager.default.createDirectory(
            atPath: sandbox.runtime + "/latchkey", withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        let launcher = """
            import os, socket, sys
            s = socket.socket(socket.AF_INET); s.bind(("127.0.0.1", 0)); s.listen(16)
            os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
            pid = os.fork()
            if pid == 0:
                os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
                os.execv(sys.argv[1], [sys.argv[1], "agent", "run"])
            import time
            for _ in range(200):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    print(os.waitstatus_to_exitcode(status)); sys.exit(0)
                time.sleep(0.05)
            os.kill(pid, 9); os.waitpid(pid, 0); print("still running")
            """
        let started = try runProgram(
            "/usr/bin/python3", ["-c", launcher, try latchkeyPath()], environment: sandbox.environment)
        #expect(started.text == "65\n", "\(started.text) \(started.stderr)")
        let log = (try? String(contentsOfFile: sandbox.log, encoding: .utf8)) ?? ""
        #expect(log.contains("not a listening Unix stream socket"), "\(log)")
    }

    @Test("64 idle connections held open do not keep another client from being answered")
    func idleConnections() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "token").status == 0)
        let idle = try (0..<64).map { _ in try POSIX.LocalSocket.connected(to: sandbox.socket) }
        let started = Date()
        let get = try sandbox.run(["session", "get", "api"])
        // A coarse bound (the figure itself is make bench's): queued behind them it would take 30 s.
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(get.status == 0 && get.text == "token\n", "\(get.stderr)")
        #expect(get.stderr.isEmpty, "answered by the agent, not run in-process after a refusal")
        withExtendedLifetime(idle) {}
    }

    @Test(
        "one process holding 300 connections is held to 32 of them, and another client is still answered by the agent")
    func connectionsPerProcess() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "token", agent: false).status == 0)
        // Another namespace's command starts the agent, so that only the get below can make it serve this one.
        let starter = try latchkey(
            ["--backend", "file", "--store-dir", sandbox.store.storeDirectory, "--app", "starter", "session", "list"],
            environment: sandbox.environment)
        #expect(starter.status == 0, "\(starter.stderr)")
        let held = (0..<300).compactMap { _ in try? POSIX.LocalSocket.connected(to: sandbox.socket) }
        let get = try sandbox.run(["session", "get", "api"])
        #expect(get.status == 0 && get.text == "token\n", "\(get.stderr)")
        let status = try latchkey(["--json", "agent", "status"], environment: sandbox.environment)
        let served = try #require(try status.json()["namespaces"] as? [[String: Any]]).compactMap {
            $0["app"] as? String
        }
        #expect(served.contains(sandbox.store.app), "answered by the agent, not in-process after a refusal: \(served)")
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(log.contains("refused a connection: process \(getpid()) already holds 32"), "\(log)")
        #expect(!log.contains("256 are open"), "\(log)")
        withExtendedLifetime(held) {}
    }
}
