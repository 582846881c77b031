import Foundation
import LatchkeyTestSupport
import Testing

/// A logout, a wipe or a session delete that lands while another process is refreshing
/// the session (docs/ROTATION.md, "Logging out during a refresh"): the refresh command
/// blocks until the test releases it, so the deletion runs while the refresh is in flight.
@Suite("latchkey session grants against a logout", .sandboxed)
struct CLIGrantLogoutTests {
    /// Which process refreshes, which ends the session, and how.
    struct Race: CustomTestStringConvertible, Sendable {
        let backend: String
        let refreshThroughAgent: Bool
        let endThroughAgent: Bool
        let ending: [String]
        /// A policy of the namespace's own (`audit.enabled` false), or nil for the default.
        var policy: String? = nil

        var testDescription: String {
            "\(backend), refresh \(refreshThroughAgent ? "in the agent" : "in-process"), "
                + "\(ending.joined(separator: " ")) \(endThroughAgent ? "through the agent" : "in-process")"
                + (policy.map { ", policy \($0)" } ?? "")
        }
    }

    static let races: [Race] = backends.flatMap { backend in
        [
            Race(backend: backend, refreshThroughAgent: false, endThroughAgent: false, ending: ["logout"]),
            Race(backend: backend, refreshThroughAgent: true, endThroughAgent: false, ending: ["logout"]),
            Race(backend: backend, refreshThroughAgent: false, endThroughAgent: true, ending: ["logout"]),
            Race(backend: backend, refreshThroughAgent: true, endThroughAgent: true, ending: ["logout"]),
            Race(backend: backend, refreshThroughAgent: false, endThroughAgent: false, ending: ["wipe", "--yes"]),
            Race(
                backend: backend, refreshThroughAgent: true, endThroughAgent: false, ending: ["session", "delete", "s"]),
            Race(
                backend: backend, refreshThroughAgent: false, endThroughAgent: false, ending: ["logout"],
                policy: "unaudited"),
        ]
    }

    @Test(
        "a session ended while its refresh is in flight stays ended, in the store and through the agent",
        arguments: races)
    func endedDuringRefresh(race: Race) throws {
        let sandbox = try AgentSandbox(race.backend)
        let directory = sandbox.store.directory
        var policy: [String] = []
        if race.policy != nil {
            let path = directory + "/unaudited.json"
            try #"{"version": 1, "name": "unaudited", "audit": {"enabled": false}}"#.write(
                toFile: path, atomically: true, encoding: .utf8)
            policy = ["--policy", path]
        }
        func environment(agent: Bool) -> [String: String?] {
            agent ? sandbox.environment : ["XDG_RUNTIME_DIR": sandbox.runtime, "LATCHKEY_AGENT": "off"]
        }
        let put = try latchkey(
            sandbox.store.options + policy + ["session", "put", "s", "--grant"],
            input: TokenEndpoint.expiredResponse(refresh: "r0"), environment: environment(agent: false))
        #expect(put.status == 0, "\(put.stderr)")
        // The refresh command: reads the refresh token, says it started, waits for the release,
        // then answers as a token endpoint that rotated the grant.
        let started = directory + "/started"
        let release = directory + "/release"
        let answer = #"{"access_token":"rotated","token_type":"Bearer","expires_in":3600,"refresh_token":"r1"}"#
        let command =
            "cat >/dev/null; : > '\(started)'; while [ ! -e '\(release)' ]; do sleep 0.02; done; printf '%s' '\(answer)'"
        let refresh = try Child(
            try latchkeyPath(), sandbox.store.options + policy + ["session", "get", "s", "--refresh-command", command],
            environment: environment(agent: race.refreshThroughAgent))
        #expect(
            sandbox.eventually(20) { FileManager.default.fileExists(atPath: started) },
            "the refresh command did not start")
        let ending = try Child(
            try latchkeyPath(), sandbox.store.options + policy + race.ending,
            environment: environment(agent: race.endThroughAgent))
        // One agent runs a namespace's requests one at a time: there the ending waits for the
        // refresh and runs after it. Anywhere else it does not wait for the refresher.
        let queued = race.refreshThroughAgent && race.endThroughAgent
        let endedFirst = sandbox.eventually(queued ? 1 : 20) { !ending.process.isRunning }
        #expect(endedFirst != queued, "it waited for the refresher, or the agent did not queue it")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        let ended = try ending.finish()
        let refreshed = try refresh.finish()
        #expect(ended.status == 0, "\(ended.stderr)")
        if queued {
            #expect(refreshed.status == 0 && refreshed.text == "rotated\n", "\(refreshed.stderr)")
        } else {
            // The session ended before the refresh could save: its new token is not handed out.
            #expect(refreshed.status == 1 && refreshed.text.isEmpty, "\(refreshed.status): \(refreshed.stderr)")
        }
        for agent in [false, true] {
            let listed = try latchkey(
                sandbox.store.options + policy + ["--json", "session", "list"], environment: environment(agent: agent))
            let sessions = try listed.json()["sessions"] as? [Any]
            #expect(
                sessions?.isEmpty == true, "the session came back (\(agent ? "agent" : "in-process")): \(listed.text)")
            let read = try latchkey(
                sandbox.store.options + policy + ["session", "get", "s"], environment: environment(agent: agent))
            #expect(read.status == 1 && read.text.isEmpty, "\(read.text)")
        }
    }

    @Test(
        "a logout that cannot take the commit lock within 30 s exits 75, saying why, and deletes nothing",
        arguments: ["logout", "wipe"])
    func commitLockHeld(command: String) throws {
        let store = try Store("file")
        let put = try store.run(["session", "put", "s"], input: "token\n", environment: ["LATCHKEY_AGENT": "off"])
        #expect(put.status == 0, "\(put.stderr)")
        // Another process holds the lock, as a refresh stopped (SIGSTOP) while it saves would.
        let held = try HeldLock(store.namespaceFile("commit.lock"))
        let ended = try store.run(
            command == "wipe" ? ["wipe", "--yes"] : [command], environment: ["LATCHKEY_AGENT": "off"])
        try held.release()
        #expect(ended.status == 75, "\(ended.status): \(ended.stderr)")
        #expect(ended.stderr.contains("saving or deleting") && ended.stderr.contains("nothing was changed"))
        let read = try store.run(["session", "get", "s"], environment: ["LATCHKEY_AGENT": "off"])
        #expect(read.status == 0 && read.text == "token\n", "the session was deleted: \(read.stderr)")
    }
}
