import Foundation
import LatchkeyAgent
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
}
