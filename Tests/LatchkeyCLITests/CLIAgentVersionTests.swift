import Foundation
import LatchkeyAgent
import LatchkeyCommands
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// A client and an agent of different protocol versions: an agent left running across an upgrade.
@Suite("latchkey agent of another protocol version", .sandboxed)
struct CLIAgentVersionTests {
    /// Serves as an agent of protocol version 3 (the one before this Latchkey's) would, as far as a
    /// client can tell, on a thread of this process: it declines every request of another version in
    /// version 3, as that agent did, and stops (removing its socket) when asked to in its own version.
    static func serveAsOlderAgent(_ listener: POSIX.LocalSocket, socket: String) {
        while let connection = try? listener.accept() {
            var header = [UInt8](repeating: 0, count: AgentMessage.headerLength)
            guard
                (try? header.withUnsafeMutableBytes({ try connection.receive(into: $0, before: .now + .seconds(5)) }))
                    == true
            else { continue }
            var body = [UInt8](repeating: 0, count: header[6..<10].reduce(0) { $0 << 8 | Int($1) })
            if !body.isEmpty {
                _ = try? body.withUnsafeMutableBytes { try connection.receive(into: $0, before: .now + .seconds(5)) }
            }
            if header[4] == 3 && header[5] == AgentMessage.Kind.stop.rawValue {
                let stopped = AgentMessage(.information, [(.line, SecretBytes(utf8: "pid=4242"))])
                try? connection.send(stopped, version: 3, before: .now + .seconds(5))
                try? FileManager.default.removeItem(atPath: socket)
                return
            }
            var declined = AgentMessage(.declined)
            declined.append(.text, "this agent speaks protocol version 3, not \(header[4])")
            try? connection.send(declined, version: 3, before: .now + .seconds(5))
        }
    }

    @Test(
        "an agent of another protocol version: the command says so (both versions, latchkey agent stop) and runs in-process; agent stop stops it"
    )
    func olderAgent() throws {
        let sandbox = try AgentSandbox()
        try FileManager.default.createDirectory(
            atPath: sandbox.runtime + "/latchkey", withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        let listener = try POSIX.LocalSocket.listening(
            at: sandbox.socket, by: sandbox.runtime + "/latchkey/agent.new")
        Thread.detachNewThread { Self.serveAsOlderAgent(listener, socket: sandbox.socket) }

        let put = try sandbox.run(["session", "put", "api"], input: "token")
        #expect(put.status == 0, "\(put.stderr)")
        #expect(
            put.stderr.contains("speaks protocol version 3 and this latchkey \(AgentMessage.protocolVersion)")
                && put.stderr.contains("`latchkey agent stop`"), "\(put.stderr)")
        // It ran in this process: the session is in the store.
        let get = try sandbox.run(["session", "get", "api"], agent: false)
        #expect(get.status == 0 && String(decoding: get.stdout, as: UTF8.self) == "token\n", "\(get.stderr)")

        let stop = try latchkey(["agent", "stop"], environment: sandbox.environment)
        #expect(stop.status == 0 && stop.text.contains("stopped the agent (pid=4242)"), "\(stop.text) \(stop.stderr)")
        #expect(sandbox.eventually(10) { !FileManager.default.fileExists(atPath: sandbox.socket) })
    }

    @Test(
        "a run request carries the namespace its client resolved: one without it, or naming a relative path, is refused; a whole one runs"
    )
    func namespaceResolvedByTheClient() throws {
        let sandbox = try AgentSandbox()
        let pid = try sandbox.startAgent()
        #expect(try sandbox.run(["session", "put", "api"], input: "token").status == 0)
        let get = StoreCommand.sessionGet(name: "api", account: "", noNewline: false, refreshCommand: nil)
        func request(_ namespace: ResolvedNamespace?) throws -> AgentMessage {
            try sandbox.runRequest(get, namespace: namespace)
        }
        var relative = sandbox.namespace()
        relative.policy = "policy.json"
        for refused in [nil, relative] {
            let connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
            try connection.send(try request(refused), before: .now + .seconds(2))
            // Closed without an answer (the agent's log names the rule).
            var answered: UInt8?
            if case .some(.some(let received)) = try? connection.receiveMessage(before: .now + .seconds(5)) {
                answered = received.header.kind
            }
            #expect(answered == nil, "\(String(describing: refused))")
        }
        let ran = try CLIAgentTests.exchangeRun(try request(sandbox.namespace()), sandbox)
        #expect(ran.status == 0 && String(decoding: ran.stdout, as: UTF8.self) == "token\n", "\(ran.stderr)")
        #expect(
            sandbox.eventually(10) {
                let log = (try? String(contentsOfFile: sandbox.log, encoding: .utf8)) ?? ""
                return log.contains("without its namespace") && log.contains("names a relative path")
            })
        #expect(try sandbox.agentProcessID() == pid)
    }
}

@Suite("latchkey agent: relative paths are the client's", .sandboxed)
struct CLIAgentRelativePathTests {
    @Test(
        "a relative --policy or LATCHKEY_POLICY, and a relative --from-file, mean through the agent what they mean in-process"
    )
    func relativePaths() throws {
        let sandbox = try AgentSandbox()
        let pid = try sandbox.startAgent()
        let directory = sandbox.store.directory + "/work"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        try #"{"version": 1, "name": "relative-marker"}"#.write(
            toFile: directory + "/policy.json", atomically: true, encoding: .utf8)
        try "value\n".write(toFile: directory + "/value.txt", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory + "/value.txt")
        func run(_ arguments: [String], agent: Bool, extra: [String: String?] = [:]) throws -> Run {
            var environment =
                agent ? sandbox.environment : ["XDG_RUNTIME_DIR": sandbox.runtime, "LATCHKEY_AGENT": "off"]
            environment.merge(extra) { $1 }
            return try Child(
                try latchkeyPath(), sandbox.store.options + arguments, environment: environment, directory: directory
            ).finish()
        }
        for (arguments, extra) in [
            (["--policy", "policy.json", "--json", "status"], [:]),
            (["--json", "status"], ["LATCHKEY_POLICY": "policy.json"]),
        ] as [([String], [String: String?])] {
            let viaAgent = try run(arguments, agent: true, extra: extra)
            let inProcess = try run(arguments, agent: false, extra: extra)
            #expect(viaAgent.status == 0 && viaAgent.text.contains("relative-marker"), "\(viaAgent.stderr)")
            #expect(viaAgent.status == inProcess.status && viaAgent.text == inProcess.text, "\(arguments)")
        }
        let viaAgent = try run(["secret", "put", "key", "--from-file", "value.txt"], agent: true)
        let inProcess = try run(["secret", "put", "key", "--from-file", "value.txt"], agent: false)
        #expect(viaAgent.status == 64 && viaAgent.stderr.contains("--from-file needs an absolute path"))
        #expect(viaAgent.status == inProcess.status && viaAgent.stderr == inProcess.stderr)
        let saved = try run(["secret", "put", "key", "--from-file", directory + "/value.txt"], agent: true)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(try run(["secret", "get", "key"], agent: false).text == "value\n")
        #expect(try sandbox.agentProcessID() == pid)
    }
}
