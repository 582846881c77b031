import Foundation
import LatchkeyAgent
import LatchkeyCommands
import LatchkeySystem
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// A private runtime directory for one agent: the test's own (`TestSandbox`), so the
/// agent is ended and the directory removed when the test ends.
final class AgentSandbox: @unchecked Sendable {
    let store: Store
    let runtime: String
    var socket: String { runtime + "/latchkey/agent.sock" }
    var log: String { runtime + "/latchkey/agent.log" }

    /// - Parameter reachable: A runtime directory right in `/tmp`, whose mode the test may open to another user.
    init(_ backend: String = "file", label: String = #function, reachable: Bool = false) throws {
        store = try Store(backend, label)
        let sandbox = try TestSandbox.required(for: "AgentSandbox")
        runtime = try reachable ? sandbox.directoryInSystemTemporary() : sandbox.runtimeDirectory()
    }

    /// The environment of a command that uses this agent.
    var environment: [String: String?] { ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": nil] }

    /// Runs `latchkey` with the store's options, through this agent (or in-process with `agent: false`).
    @discardableResult
    func run(_ arguments: [String], input: String = "", agent: Bool = true, extra: [String: String?] = [:]) throws
        -> Run
    {
        var environment = agent ? self.environment : ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": "off"]
        environment.merge(extra) { $1 }
        return try latchkey(store.options + arguments, input: input, environment: environment)
    }

    /// The namespace of this sandbox's store, as a client resolves it (its own policy: the built-in default).
    func namespace() -> ResolvedNamespace {
        ResolvedNamespace(
            storeDirectory: store.storeDirectory, app: store.app, policy: "built-in:default", backend: store.backend,
            sessionUnlock: "never")
    }

    /// A `run` request of `command` in this sandbox's namespace, as the client makes one.
    func runRequest(_ command: StoreCommand) throws -> AgentMessage {
        try runRequest(command, namespace: namespace())
    }

    /// A `run` request of `command` in `namespace` (nil: without one).
    func runRequest(_ command: StoreCommand, namespace: ResolvedNamespace?) throws -> AgentMessage {
        var request = AgentMessage(.run)
        request.append(
            .toolVersion,
            try #require(try latchkey(["--version"]).text.split(separator: " ").last.map { String($0.dropLast()) }))
        request.fields.append((.command, try StoreRequest(command: command, json: false).encoded()))
        if let bus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] {
            request.append(.sessionBus, bus)
        }
        if let namespace { request.fields.append((.namespace, try namespace.encoded())) }
        return request
    }

    /// The running agent's process id, from `agent status`; nil when none runs.
    func agentProcessID() throws -> Int32? {
        let status = try latchkey(["--json", "agent", "status"], environment: environment)
        guard status.status == 0 else { return nil }
        return (try status.json()["pid"] as? NSNumber)?.int32Value
    }

    /// A policy file of this sandbox's own, which an agent the tests start names on its
    /// command line (`--policy`), so its processes can be told apart from other tests'.
    var markerPolicy: String { store.directory + "/marker-policy.json" }

    /// The agent processes started with ``markerPolicy``, found by their command lines
    /// (readable even for an agent, which is not dumpable, unlike its environment).
    func agentProcesses() throws -> [Int32] {
        if !FileManager.default.fileExists(atPath: markerPolicy) {
            try #"{"version": 1, "name": "marker"}"#.write(toFile: markerPolicy, atomically: true, encoding: .utf8)
        }
        return try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap(Int32.init).filter { pid in
            guard let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let words = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.contains("agent") && words.contains("run") && words.contains(markerPolicy)
        }
    }

    /// Starts this sandbox's agent (`latchkey ARGUMENTS agent run`, ended with the test) and waits until it answers, for a test of what the agent does with the
    /// commands that follow rather than of how a command starts one: a command whose agent
    /// does not answer within 2 s of being started runs in-process, as it may on a loaded machine.
    /// - Parameter arguments: What goes before `agent run` (a `--policy`, whose agent rules it follows).
    /// - Returns: The agent's process id.
    @discardableResult
    func startAgent(_ arguments: [String] = []) throws -> Int32 {
        // In the background of a shell that exits at once, holding none of this process's pipes
        // (the sandbox ends it by the agent.lock it holds).
        let shell = try runProgram(
            "sh", ["-c", #""$0" "$@" agent run </dev/null >/dev/null 2>&1 &"#, try latchkeyPath()] + arguments,
            environment: environment)
        #expect(shell.status == 0, "\(shell.stderr)")
        return try #require(awaitAgent(), "the agent answers")
    }

    /// The process id of the agent once it answers, within a minute (a command that started
    /// one on a loaded machine may have run in-process before it answered); nil if none does.
    /// - Parameter other: An agent that does not count (one the test ended).
    func awaitAgent(other: Int32? = nil) -> Int32? {
        var found: Int32?
        _ = eventually(60) {
            found = (try? agentProcessID()).flatMap { $0 }.flatMap { $0 == other ? nil : $0 }
            return found != nil
        }
        return found
    }

    /// Waits up to `seconds` for `condition`.
    func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try condition()
    }
}

@Suite("latchkey agent", .sandboxed)
struct CLIAgentTests {
    @Test("a command starts an agent and runs in it, with the same output, status and audit entries as in-process")
    func transparent() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.agentProcessID() == nil)
        let put = try sandbox.run(["session", "put", "api"], input: "token-one\n")
        #expect(put.status == 0, "\(put.stderr)")
        let pid = try #require(sandbox.awaitAgent())
        let viaAgent = try sandbox.run(["session", "get", "api"])
        let inProcess = try sandbox.run(["session", "get", "api"], agent: false)
        #expect(viaAgent.status == 0 && inProcess.status == 0)
        #expect(
            viaAgent.stdout == inProcess.stdout && String(decoding: viaAgent.stdout, as: UTF8.self) == "token-one\n")
        let missingViaAgent = try sandbox.run(["session", "get", "nothing"])
        let missingInProcess = try sandbox.run(["session", "get", "nothing"], agent: false)
        #expect(missingViaAgent.status == 1 && missingInProcess.status == 1)
        #expect(missingViaAgent.stderr == missingInProcess.stderr)
        #expect(try sandbox.agentProcessID() == pid, "one agent served every command")
        let status = try latchkey(["--json", "agent", "status"], environment: sandbox.environment)
        let namespaces = try #require(try status.json()["namespaces"] as? [[String: Any]])
        #expect(
            namespaces.count == 1 && namespaces.first?["app"] as? String == sandbox.store.app
                && namespaces.first?["backend"] as? String == "file")
        #expect(!status.text.contains("token-one"))
        let verify = try sandbox.run(["audit", "verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        let shown = String(decoding: try sandbox.run(["audit", "show"], agent: false).stdout, as: UTF8.self)
        // The two reads that found the session are recorded, one from the agent and one in-process.
        #expect(shown.components(separatedBy: "session.read").count - 1 == 2, "\(shown)")
    }

    @Test(
        "a command through the agent has its audit entry in the trail before its answer, made durable and anchored right after it"
    )
    func auditSettledAfterAnswer() throws {
        let sandbox = try AgentSandbox()
        try sandbox.startAgent()
        #expect(try sandbox.run(["session", "put", "api"], input: "token-one\n").status == 0)
        let appID = try AppID(sandbox.store.app)
        let trail = AuditTrail(
            appID: appID, directory: sandbox.store.storeDirectory,
            backend: EncryptedFileBackend.auditKeys(appID: appID, directory: sandbox.store.storeDirectory))
        for _ in 0..<3 {
            let get = try sandbox.run(["session", "get", "api"])
            #expect(get.status == 0, "\(get.stderr)")
            let last = try #require(try trail.entries().last)
            #expect(last.event == .sessionRead, "written before the answer came")
            let key = try #require(try trail.storedKey())
            #expect(
                try sandbox.eventually(10) { try trail.readAnchor(key: key).value?.sequence == last.sequence },
                "anchored once the answer was sent")
        }
        let count = try trail.entries().count
        #expect(try trail.verify() == .intact(entryCount: count, lastSequence: UInt64(count)))
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(!log.contains("was not made durable"), "\(log)")
    }

    /// How this test process runs a command as user nobody: setpriv as root, else
    /// through `sudo -n` when it needs no password; nil when neither can.
    static let asNobody: [String]? = {
        let setpriv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        if getuid() == 0 { return setpriv }
        return (try? runProgram("sudo", ["-n", "true"]))?.status == 0 ? ["sudo", "-n"] + setpriv : nil
    }()

    @Test(
        "a peer of another uid is refused, and the refusal is in the agent's log",
        .enabled(if: asNobody != nil, "needs root, or sudo without a password, to run a client as another user"))
    func otherUserRefused() throws {
        let sandbox = try AgentSandbox(reachable: true)
        try sandbox.startAgent()
        // Open the way to the socket for user nobody; the agent still checks the peer's uid.
        try FileManager.default.setAttributes([.posixPermissions: 0o711], ofItemAtPath: sandbox.runtime)
        try FileManager.default.setAttributes([.posixPermissions: 0o711], ofItemAtPath: sandbox.runtime + "/latchkey")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: sandbox.socket)
        let script =
            "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(len(s.recv(100)))' \(sandbox.socket)"
        let command = try #require(Self.asNobody)
        let refused = try runProgram(command[0], Array(command.dropFirst()) + ["sh", "-c", script])
        #expect(refused.status == 0, "\(refused.stderr)")
        #expect(String(decoding: refused.stdout, as: UTF8.self) == "0\n", "the connection was closed without an answer")
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(log.contains("refused a connection from user 65534"))
    }

    @Test("a stale socket left by a killed agent is replaced by the next command's agent")
    func staleSocket() throws {
        let sandbox = try AgentSandbox()
        let first = try sandbox.startAgent()
        try sandbox.run(["session", "put", "api"], input: "token")
        kill(first, SIGKILL)
        #expect(sandbox.eventually(30) { kill(first, 0) != 0 })
        #expect(FileManager.default.fileExists(atPath: sandbox.socket), "the killed agent left its socket")
        let get = try sandbox.run(["session", "get", "api"])
        #expect(get.status == 0 && String(decoding: get.stdout, as: UTF8.self) == "token\n")
        #expect(sandbox.awaitAgent(other: first) != nil, "the get started another agent")
    }

    @Test("four commands starting an agent at once end with one agent")
    func concurrentStarts() throws {
        let sandbox = try AgentSandbox()
        _ = try sandbox.agentProcesses() // writes the marker policy
        let children = try (0..<4).map { _ in
            try Child(
                latchkeyPath(), sandbox.store.options + ["--policy", sandbox.markerPolicy, "session", "list"],
                environment: sandbox.environment)
        }
        for child in children { #expect(try child.finish().status == 0) }
        let settled = try sandbox.eventually(3) { try sandbox.agentProcesses().count == 1 }
        let agents = try sandbox.agentProcesses()
        #expect(settled, "agents: \(agents)")
        // Exactly one agent ever served: every other one found the lock (or the answering agent) and left.
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(log.components(separatedBy: ": serving ").count - 1 == 1, "\(log)")
    }

    @Test("the agent exits after agent.idleExitSeconds without requests, removing its socket")
    func idleExit() throws {
        let sandbox = try AgentSandbox()
        let policy = sandbox.store.directory + "/idle.json"
        try #"{"version": 1, "name": "idle", "agent": {"idleExitSeconds": 1}}"#.write(
            toFile: policy, atomically: true, encoding: .utf8)
        #expect(try sandbox.run(["--policy", policy, "session", "list"]).status == 0)
        let pid = try #require(sandbox.awaitAgent())
        // Idle for 1 s, it is gone within a few (generous for a loaded machine; it would stay 10 minutes).
        #expect(sandbox.eventually(30) { kill(pid, 0) != 0 })
        #expect(!FileManager.default.fileExists(atPath: sandbox.socket))
    }

    /// A passphrase policy with a fast KDF and `cache` seconds of unlock cache.
    static func passphrasePolicy(_ sandbox: AgentSandbox, cache: Int) throws -> (policy: String, passphraseFile: String)
    {
        let policy = sandbox.store.directory + "/passphrase.json"
        try """
        {"version": 1, "name": "passphrase-test", "backend": {"kind": "file"},
         "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8}},
         "agent": {"unlockCacheSeconds": \(cache)}}
        """.write(toFile: policy, atomically: true, encoding: .utf8)
        let passphraseFile = sandbox.store.directory + "/passphrase"
        try "correct horse".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphraseFile)
        return (policy, passphraseFile)
    }

    @Test("a passphrase vault stays unlocked in the agent until `latchkey lock`, then asks again")
    func lockForgets() throws {
        let sandbox = try AgentSandbox()
        try sandbox.startAgent()
        let (policy, passphraseFile) = try Self.passphrasePolicy(sandbox, cache: 900)
        let put = try sandbox.run(
            ["--policy", policy, "--passphrase-file", passphraseFile, "session", "put", "api"], input: "secret-token")
        #expect(put.status == 0, "\(put.stderr)")
        let cached = try sandbox.run(["--policy", policy, "session", "get", "api"])
        #expect(cached.status == 0, "\(cached.stderr)")
        #expect(String(decoding: cached.stdout, as: UTF8.self) == "secret-token\n")
        let status = try latchkey(["agent", "status"], environment: sandbox.environment)
        #expect(String(decoding: status.stdout, as: UTF8.self).contains("unlocked: \(sandbox.store.app)"))
        #expect(try latchkey(["lock"], environment: sandbox.environment).status == 0)
        let locked = try sandbox.run(["--policy", policy, "session", "get", "api"])
        #expect(locked.status == 77, "\(locked.stderr)")
        #expect(locked.stderr.contains("--passphrase-fd"))
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(!log.contains("secret-token") && !log.contains("correct horse") && !log.contains("api"))
    }

    @Test("the unlock cache ends after agent.unlockCacheSeconds, and 0 keeps nothing")
    func cacheTime() throws {
        let sandbox = try AgentSandbox()
        try sandbox.startAgent()
        // Five seconds, so the read right after the put is served from the cache even while
        // the rest of the suite keeps both cores busy; the expiry is awaited from the put's end.
        let (policy, passphraseFile) = try Self.passphrasePolicy(sandbox, cache: 5)
        #expect(
            try sandbox.run(
                ["--policy", policy, "--passphrase-file", passphraseFile, "session", "put", "api"], input: "t"
            ).status == 0)
        let cachedUntil = Date().addingTimeInterval(5)
        let cached = try sandbox.run(["--policy", policy, "session", "get", "api"])
        #expect(cached.status == 0, "\(cached.stderr)")
        Thread.sleep(until: cachedUntil.addingTimeInterval(0.5))
        #expect(try sandbox.run(["--policy", policy, "session", "get", "api"]).status == 77)

        let (none, _) = try Self.passphrasePolicy(sandbox, cache: 0)
        #expect(
            try sandbox.run(["--policy", none, "--passphrase-file", passphraseFile, "session", "get", "api"]).status
                == 0)
        #expect(try sandbox.run(["--policy", none, "session", "get", "api"]).status == 77)
    }

    @Test(
        "a client that sends garbage, or half a request and stalls, is cut off within the deadline while another is served"
    )
    func badClients() throws {
        let sandbox = try AgentSandbox()
        try sandbox.run(["session", "put", "api"], input: "token")
        let stalled = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try [UInt8]("LKAG\u{1}\u{1}\u{0}\u{0}\u{1}\u{0}".utf8).withUnsafeBytes {
            try stalled.send($0, before: .now + .seconds(1))
        }
        let garbage = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try [UInt8]("GET / HTTP/1.0\r\n\r\n".utf8).withUnsafeBytes { try garbage.send($0, before: .now + .seconds(1)) }
        let started = Date()
        let served = try sandbox.run(["session", "get", "api"])
        #expect(served.status == 0 && String(decoding: served.stdout, as: UTF8.self) == "token\n")
        #expect(Date().timeIntervalSince(started) < 1.5, "the other client was served while one stalled")
        var byte = [UInt8](repeating: 0, count: 1)
        #expect(
            try byte.withUnsafeMutableBytes { try garbage.receive(into: $0, before: .now + .seconds(1)) } == false,
            "garbage: closed")
        #expect(
            try byte.withUnsafeMutableBytes { try stalled.receive(into: $0, before: .now + .seconds(4)) } == false,
            "stalled: closed")
        #expect(Date().timeIntervalSince(started) < 4)
        #expect(try sandbox.agentProcessID() != nil, "the agent still runs")
    }

    @Test(
        "the agent runs only typed store commands: a request whose command is `agent stop`, `demo` or a command line is refused"
    )
    func onlyStoreCommands() throws {
        let sandbox = try AgentSandbox()
        let pid = try sandbox.startAgent()
        for command in [#"{"agentStop":{}}"#, #"{"demo":{}}"#, #"["agent","stop"]"#] {
            var request = try sandbox.runRequest(.usernameGet)
            request.fields.removeAll { $0.tag == .command }
            request.fields.append((.command, SecretBytes(utf8: #"{"json":false,"command":"# + command + "}")))
            let connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
            try connection.send(request, before: .now + .seconds(2))
            // Closed without an answer (the agent's log names the rule).
            var answered: UInt8?
            if case .some(.some(let received)) = try? connection.receiveMessage(before: .now + .seconds(5)) {
                answered = received.header.kind
            }
            #expect(answered == nil, "\(command)")
        }
        #expect(
            sandbox.eventually(10) {
                ((try? String(contentsOfFile: sandbox.log, encoding: .utf8)) ?? "").contains(
                    "a run request's command is not one")
            })
        #expect(try sandbox.agentProcessID() == pid, "the agent still runs")
    }

    /// Sends a `run` request as the client does (request, then `accepted`) and collects the answer.
    static func exchangeRun(_ request: AgentMessage, _ sandbox: AgentSandbox) throws -> (
        status: Int32?, stdout: [UInt8], stderr: String
    ) {
        let connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try connection.send(request, before: .now + .seconds(2))
        let accepted = try #require(try connection.receiveMessage(before: .now + .seconds(10))?.message)
        #expect(accepted.kind == .accepted)
        var stdout: [UInt8] = []
        var stderr = ""
        while let message = try connection.receiveMessage(before: .now + .seconds(30))?.message {
            if message.kind == .result { return (message.integer(.exitStatus), stdout, stderr) }
            stdout += message.value(.standardOutput)?.copyBytes() ?? []
            stderr += message.value(.standardError)?.utf8String() ?? ""
        }
        return (nil, stdout, stderr)
    }

    @Test("output that cannot be written is exit 74 through the agent as in-process (standard output on /dev/full)")
    func unwritableOutput() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "token").status == 0)
        for agent in [true, false] {
            let environment = agent ? "" : "LATCHKEY_AGENT=off "
            let command = try ([latchkeyPath()] + sandbox.store.options + ["session", "get", "api"]).map { "'\($0)'" }
                .joined(separator: " ")
            let run = try runProgram(
                "sh", ["-c", "\(environment)exec \(command) > /dev/full"], environment: sandbox.environment)
            #expect(run.status == 74, "agent \(agent): \(run.stderr)")
            #expect(run.stderr.contains("No space left on device"), "agent \(agent): \(run.stderr)")
        }
    }

    @Test(
        "a request from another protocol or Latchkey version, or from another session bus, is declined and runs in-process"
    )
    func declined() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "token").status == 0)
        let pid = try #require(try sandbox.agentProcessID())
        // Another Latchkey version: declined, naming the agent's.
        var request = AgentMessage(.run)
        request.append(.toolVersion, "0.0.0-other")
        request.fields.append((.command, try StoreRequest(command: .usernameGet, json: false).encoded()))
        var connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try connection.send(request, before: .now + .seconds(2))
        var answer = try #require(try connection.receiveMessage(before: .now + .seconds(5))?.message)
        #expect(answer.kind == .declined && answer.text(.text)?.contains("this agent runs latchkey") == true)
        // Another protocol version: declined in the client's version, which every version reads.
        var bytes = try request.encoded().copyBytes()
        bytes[4] = 9
        connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try bytes.withUnsafeBytes { try connection.send($0, before: .now + .seconds(2)) }
        let received = try #require(try connection.receiveMessage(before: .now + .seconds(5)))
        answer = try #require(received.message)
        #expect(received.header.version == 9 && answer.kind == .declined)
        #expect(answer.text(.text)?.contains("protocol version \(AgentMessage.protocolVersion), not 9") == true)
        // A client on another session bus runs in-process, with the same answer.
        let other = try sandbox.run(
            ["session", "get", "api"], extra: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        #expect(other.status == 0 && String(decoding: other.stdout, as: UTF8.self) == "token\n", "\(other.stderr)")
        #expect(try sandbox.agentProcessID() == pid)
    }

    @Test("a socket passed by a service manager (LISTEN_FDS, LISTEN_PID) is the one served")
    func socketActivation() throws {
        let sandbox = try AgentSandbox()
        try FileManager.default.createDirectory(
            atPath: sandbox.runtime + "/latchkey", withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        // What systemd does for latchkey-agent.socket: bind and listen, then start the service with
        // the socket as descriptor 3 and LISTEN_PID set to the service's own pid.
        let launcher = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600); s.listen(16)
            if os.fork() == 0:
                os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
                os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), LATCHKEY_AGENT="on")
                devnull = os.open("/dev/null", os.O_RDWR)
                for fd in (0, 1, 2): os.dup2(devnull, fd)
                os.execv(sys.argv[2], [sys.argv[2], "--policy", sys.argv[3], "agent", "run"])
            """
        _ = try sandbox.agentProcesses() // writes the marker policy
        let started = try runProgram(
            "python3", ["-c", launcher, sandbox.socket, try latchkeyPath(), sandbox.markerPolicy],
            environment: sandbox.environment)
        #expect(started.status == 0, "\(started.stderr)")
        let pid = try #require(try sandbox.agentProcessID())
        #expect(try sandbox.run(["session", "put", "api"], input: "token").status == 0)
        #expect(try sandbox.agentProcessID() == pid, "the command used the passed socket's agent")
        #expect(try sandbox.agentProcesses() == [pid])
    }

    @Test("the agent forbids dumps as it starts (its core file limit is 0); stop ends it")
    func notDumpableAndStop() throws {
        let sandbox = try AgentSandbox()
        let pid = try sandbox.startAgent()
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(
            core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(core)")
        let stop = try latchkey(["agent", "stop"], environment: sandbox.environment)
        #expect(stop.status == 0)
        #expect(sandbox.eventually(30) { kill(pid, 0) != 0 })
        #expect(try latchkey(["agent", "status"], environment: sandbox.environment).status == 1)
    }
}

@Suite("latchkey agent beside in-process commands", .sandboxed)
struct CLIAgentSharingTests {
    @Test("a namespace wiped and refilled in-process between agent commands stays one namespace", arguments: backends)
    func sharedNamespace(backend: String) throws {
        let sandbox = try AgentSandbox(backend)
        #expect(try sandbox.run(["session", "put", "a"], input: "first").status == 0)
        #expect(try sandbox.run(["session", "get", "a"]).status == 0)
        #expect(try sandbox.run(["wipe", "--yes"], agent: false).status == 0)
        #expect(
            try sandbox.run(["session", "put", "b"], input: "second").status == 0,
            "through the agent, after the keys changed")
        let inProcess = try sandbox.run(["session", "get", "b"], agent: false)
        #expect(String(decoding: inProcess.stdout, as: UTF8.self) == "second\n", "\(inProcess.stderr)")
        #expect(try sandbox.run(["session", "put", "c"], input: "third", agent: false).status == 0)
        let viaAgent = try sandbox.run(["session", "get", "c"])
        #expect(String(decoding: viaAgent.stdout, as: UTF8.self) == "third\n", "\(viaAgent.stderr)")
        #expect(try sandbox.run(["session", "get", "a"]).status == 1)
        let verify = try sandbox.run(["audit", "verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(try sandbox.run(["audit", "verify"], agent: false).status == 0)
    }
}
