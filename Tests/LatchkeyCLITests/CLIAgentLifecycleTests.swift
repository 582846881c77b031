import Foundation
import Glibc
import LatchkeyAgent
import LatchkeySystem
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("latchkey agent: its socket, its log, stopping", .sandboxed)
struct CLIAgentLifecycleTests {
    /// The inotify events of `directory` for entries named `name` while `body` runs.
    static func events(in directory: String, for name: String, during body: () throws -> Void) throws -> [UInt32] {
        let watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        try #require(watch >= 0, "inotify_init1")
        defer { close(watch) }
        let mask = UInt32(IN_CREATE) | UInt32(IN_ATTRIB) | UInt32(IN_MOVED_TO)
        try #require(inotify_add_watch(watch, directory, mask) >= 0, "inotify_add_watch")
        try body()
        var found: [UInt32] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                let nameBytes = buffer[(offset + header)..<(offset + header + Int(event.len))].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == name { found.append(event.mask) }
                offset += header + Int(event.len)
            }
        }
        return found
    }

    @Test(
        "the agent's socket appears under its name with its final mode (0600) and is never changed there",
        arguments: ["077", "022"])
    func socketAppearsWithItsMode(umask: String) throws {
        let sandbox = try AgentSandbox(label: "socketMode\(umask)")
        let directory = sandbox.runtime + "/latchkey"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let seen = try Self.events(in: directory, for: "agent.sock") {
            let shell = try runProgram(
                "sh", ["-c", #"umask "$1"; "$0" agent run </dev/null >/dev/null 2>&1 &"#, try latchkeyPath(), umask],
                environment: sandbox.environment)
            #expect(shell.status == 0, "\(shell.stderr)")
            #expect(sandbox.awaitAgent() != nil, "the agent answers")
        }
        // A socket bound under its final name and then changed (`chmod`) could be found in between.
        #expect(seen == [UInt32(IN_MOVED_TO)], "umask \(umask): events \(seen.map { String($0, radix: 16) })")
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.socket)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "umask \(umask)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/agent.new"), "no temporary name left")
        let first = try sandbox.run(["session", "list"])
        #expect(first.status == 0 && first.stderr.isEmpty, "umask \(umask): \(first.stderr)")
    }

    @Test("a command queued behind another when the agent is told to stop runs in-process, never reported as maybe run")
    func queuedWhileStopping() throws {
        let sandbox = try AgentSandbox()
        try sandbox.startAgent()
        let put = try sandbox.run(
            ["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"), agent: false)
        #expect(put.status == 0, "\(put.stderr)")
        #expect(try sandbox.run(["session", "put", "other"], input: "token", agent: false).status == 0)
        // The refresh holds the namespace's queue until the test releases it.
        let started = sandbox.store.directory + "/started"
        let release = sandbox.store.directory + "/release"
        let answer = #"{"access_token":"rotated","token_type":"Bearer","expires_in":3600,"refresh_token":"r1"}"#
        let command =
            "cat >/dev/null; : > '\(started)'; while [ ! -e '\(release)' ]; do sleep 0.02; done; printf '%s' '\(answer)'"
        let refresh = try Child(
            try latchkeyPath(), sandbox.store.options + ["session", "get", "s", "--refresh-command", command],
            environment: sandbox.environment)
        #expect(sandbox.eventually(20) { FileManager.default.fileExists(atPath: started) }, "the refresh started")
        let logout = try Child(try latchkeyPath(), sandbox.store.options + ["logout"], environment: sandbox.environment)
        // Queued behind the refresh (nothing says so from outside: give it time to arrive).
        #expect(!sandbox.eventually(1) { !logout.process.isRunning }, "the logout waits behind the refresh")
        let stop = try latchkey(["agent", "stop"], environment: sandbox.environment)
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        let refreshed = try refresh.finish()
        #expect(refreshed.status == 0 && refreshed.text == "rotated\n", "\(refreshed.stderr)")
        let loggedOut = try logout.finish()
        #expect(loggedOut.status == 0, "\(loggedOut.status): \(loggedOut.stderr)")
        let listed = try sandbox.run(["--json", "session", "list"], agent: false)
        #expect((try listed.json()["sessions"] as? [Any])?.isEmpty == true, "the logout ran: \(listed.text)")
    }

    @Test(
        "a client reconnecting in a loop adds a few lines and a summary to agent.log, and a full agent.log starts anew"
    )
    func logLimited() throws {
        let sandbox = try AgentSandbox()
        let directory = sandbox.runtime + "/latchkey"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        // What an agent that ran long left: a log at its cap.
        let old = String(repeating: "an old line of the log\n", count: 1 << 20 / 23 + 1)
        #expect(
            FileManager.default.createFile(
                atPath: sandbox.log, contents: Data(old.utf8), attributes: [.posixPermissions: 0o600]))
        try sandbox.startAgent()
        // This process holds as many connections as one process may; every further one is refused.
        let held = try (0..<32).map { _ in try POSIX.LocalSocket.connected(to: sandbox.socket) }
        let end = Date(timeIntervalSinceNow: 3)
        var attempts = 0
        while Date() < end {
            _ = try? POSIX.LocalSocket.connected(to: sandbox.socket)
            attempts += 1
        }
        let summarised = sandbox.eventually(30) {
            ((try? String(contentsOfFile: sandbox.log, encoding: .utf8)) ?? "").contains("held back")
        }
        withExtendedLifetime(held) {}
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(summarised, "\(attempts) attempts: \(log.suffix(600))")
        let refused = log.components(separatedBy: "refused a connection").count - 1
        #expect(refused > 0 && refused <= 2 * 20, "\(refused) refusals logged of \(attempts) attempts")
        #expect(log.utf8.count < 1 << 20 && !log.contains("an old line"), "\(log.utf8.count) bytes")
        let previous = try String(contentsOfFile: sandbox.log + ".1", encoding: .utf8)
        #expect(previous == old, "the full log was kept whole as agent.log.1")
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.log)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
