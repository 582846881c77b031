import Foundation
import LatchkeySystem
import LatchkeyTestSupport
import Testing

@testable import Latchkey
@testable import LatchkeyCLI

/// `session put --grant` and `session get --refresh-command` at the edges (issue 34):
/// tokens outside VSCHAR, a refresh command that outlives its deadline, signals during a refresh.
@Suite("latchkey session grants at the edges", .sandboxed)
struct CLIGrantEdgeTests {
    /// Token values a header must never receive, as JSON string literals.
    static let unprintable = [#""a\nb""#, #""a\u0000b""#, #""a\u001b[31mb""#, #""a\r\nX-Injected: 1""#, #""a\u00e9""#]

    @Test(
        "a token outside VSCHAR from the refresh command or on put --grant exits 65, is never stored or printed",
        arguments: backends)
    func unprintableTokens(backend: String) throws {
        let store = try Store(backend)
        try store.run(["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"))
        for literal in Self.unprintable {
            for body in [
                #"{"access_token":\#(literal),"token_type":"Bearer","expires_in":3600,"refresh_token":"r1"}"#,
                #"{"access_token":"fine","token_type":"Bearer","expires_in":3600,"refresh_token":\#(literal)}"#,
            ] {
                let put = try store.run(["session", "put", "t", "--grant"], input: body)
                #expect(put.status == 65 && put.stderr.contains("VSCHAR"), "\(literal): \(put.stderr)")
                let file = try freshDirectory("body") + "/answer.json"
                try body.write(toFile: file, atomically: true, encoding: .utf8)
                let get = try store.run(["session", "get", "s", "--refresh-command", "cat >/dev/null; cat '\(file)'"])
                #expect(get.status == 65 && get.stderr.contains("VSCHAR"), "\(literal): \(get.stderr)")
                #expect(get.stdout.isEmpty && !get.stderr.contains("fine") && !get.stderr.contains("a\u{1B}"))
            }
        }
        let listed = try store.json(["session", "list"])["sessions"] as? [[String: Any]]
        #expect(listed?.map { $0["name"] as? String } == ["s"], "nothing else was stored")
        let vault = try Vault.open(
            appID: try AppID(store.app), storeDirectory: store.storeDirectory,
            backend: backend == "file" ? .file : .secretService)
        let kept = try #require(try vault.grant(named: "s", account: ""))
        #expect(kept.refreshToken?.utf8String() == "r0" && kept.accessToken.utf8String() == "stale")
    }

    @Test("the refresh deadline ends the command's whole group at once, whoever holds its output")
    func deadlineDoesNotWaitForEndOfFile() throws {
        let clock = ContinuousClock()
        let start = clock.now
        // A child that left the group (setsid) holds standard output for 20 s; the shell itself runs on.
        let run = try POSIX.runShellCommand(
            "setsid sleep 20 & exec sleep 20", input: SecretBytes(utf8: "r0"), outputLimit: 1 << 20,
            deadline: .seconds(1))
        let elapsed = clock.now - start
        #expect(run.timedOut && run.status == nil)
        #expect(elapsed < .seconds(8), "stopped at the 1 s deadline, not at the end of file: \(elapsed)")
    }

    @Test("a command that answered and left a child holding its output ends with its answer; the child is ended")
    func endedShellIsTheEnd() throws {
        let pidFile = try freshDirectory() + "/pid"
        let clock = ContinuousClock()
        let start = clock.now
        let run = try POSIX.runShellCommand(
            "sleep 30 & echo $! > '\(pidFile)'; printf answer", input: SecretBytes(utf8: "r0"),
            outputLimit: 1 << 20, deadline: .seconds(10))
        let elapsed = clock.now - start
        #expect(!run.timedOut && run.status == 0 && run.output.utf8String() == "answer")
        #expect(elapsed < .seconds(8), "did not wait for the child's end of file: \(elapsed)")
        let pid = try #require(
            Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        var gone = false
        for _ in 0..<200 where !gone {
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ")
            gone = state == nil || state?[2] == "Z"
            if !gone { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(gone, "the child left in the command's group was ended")
    }

    @Test(
        "SIGINT, SIGTERM or SIGHUP during a refresh (in-process, or run by the client for the agent): the rotated grant is saved, then the command ends by the signal; no reuse",
        arguments: backends, [false, true])
    func signalDuringRefresh(backend: String, agent: Bool) throws {
        let sandbox = try AgentSandbox(backend)
        let store = sandbox.store
        if agent { try sandbox.startAgent() }
        // Access tokens that are due at once, so every get refreshes with the refresh token last saved.
        let endpoint = try TokenEndpoint(delayMilliseconds: 1200, expiresIn: 0)
        try store.run(["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"))
        let started = store.directory + "/started"
        for (round, signal) in [SIGINT, SIGTERM, SIGHUP].enumerated() {
            try? FileManager.default.removeItem(atPath: started)
            // As a shell starts a command: no signal blocked (the test runner's threads block SIGTERM).
            let child = try Child(
                try GeneratedFiles.which("python3"),
                [
                    "-c",
                    "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                    try latchkeyPath(),
                ] + store.options + [
                    "session", "get", "s", "--refresh-command", "touch '\(started)'; " + endpoint.refreshCommand(),
                ],
                environment: agent ? sandbox.environment : ["LATCHKEY_AGENT": "off"])
            let pid = child.process.processIdentifier
            // Wait until the refresh command runs, then give curl time to send the refresh token.
            var spawned = false
            for _ in 0..<2000 where !spawned {
                spawned = FileManager.default.fileExists(atPath: started)
                if !spawned { Thread.sleep(forTimeInterval: 0.005) }
            }
            #expect(spawned, "round \(round): the refresh command never started")
            Thread.sleep(forTimeInterval: 0.2)
            kill(pid, signal)
            let run = try child.finish()
            #expect(
                child.process.terminationReason == .uncaughtSignal && run.status == signal,
                "round \(round): ended by signal \(signal), not \(run.status) (\(child.process.terminationReason.rawValue)): \(run.stderr)"
            )
            #expect(run.stdout.isEmpty, "no token is printed after the signal")
            let stats = try endpoint.stats()
            #expect(stats["refreshes"] as? Int == round + 1 && stats["reuse"] as? Int == 0, "round \(round): \(stats)")
        }
        // The grant saved last holds the endpoint's current refresh token: the next refresh works.
        let next = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        let stats = try endpoint.stats()
        #expect(next.status == 0, "\(next.stderr)")
        #expect(stats["reuse"] as? Int == 0 && stats["revoked"] as? Bool == false, "\(stats)")
        #expect(next.text == "\(stats["access_token"] as? String ?? "?")\n")
    }

    /// A refresh command that makes the file store refuse the save of its answer (the vault's lock
    /// becomes a directory, which no one, root included, can open for writing), then asks `endpoint`.
    private static func sabotagingRefresh(_ store: Store, _ endpoint: TokenEndpoint) -> String {
        let lock = store.namespaceFile("credentials.lock")
        return "rm -f '\(lock)' && mkdir '\(lock)' && " + endpoint.refreshCommand()
    }

    @Test(
        "a save that fails after the endpoint answered: the next process saves the answer, with no second refresh and no reuse"
    )
    func failedSaveRecoveredByNextProcess() throws {
        let store = try Store("file")
        // Access tokens that are due at once, so every get refreshes with the refresh token last saved.
        let endpoint = try TokenEndpoint(expiresIn: 0)
        try store.run(["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"))
        let failed = try store.run([
            "session", "get", "s", "--refresh-command", Self.sabotagingRefresh(store, endpoint),
        ])
        #expect(failed.status == 74 && failed.stdout.isEmpty, "\(failed.status): \(failed.stderr)")
        #expect(failed.stderr.contains("in this process or another"), "\(failed.stderr)")
        #expect(try endpoint.stats()["refreshes"] as? Int == 1)
        try FileManager.default.removeItem(atPath: store.namespaceFile("credentials.lock"))
        let status = try store.run(["status"])
        #expect(status.text.contains("pending rotations: 1 rotated grant"), "\(status.text)")
        #expect(try store.json(["status"])["pendingRotations"] as? Int == 1)
        // Another process (in-process, whichever mode ran the first): it saves the kept answer.
        let next = try store.run(
            ["session", "get", "s", "--refresh-command", endpoint.refreshCommand()],
            environment: ["LATCHKEY_AGENT": "off"])
        let stats = try endpoint.stats()
        #expect(next.status == 0, "\(next.stderr)")
        #expect(stats["refreshes"] as? Int == 1 && stats["reuse"] as? Int == 0, "\(stats)")
        #expect(next.text == "\(stats["access_token"] as? String ?? "?")\n")
        #expect(!FileManager.default.fileExists(atPath: store.namespaceFile("pending.vault")), "deleted once saved")
        #expect(try store.json(["status"])["pendingRotations"] as? Int == 0)
        // The saved grant holds the endpoint's current refresh token: the next refresh works, with no reuse.
        let third = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        let after = try endpoint.stats()
        #expect(third.status == 0 && after["refreshes"] as? Int == 2 && after["reuse"] as? Int == 0, "\(after)")
    }

    @Test(
        "a logout between a failed save and the next call wins: the session stays logged out, the kept answer is gone")
    func logoutAfterFailedSaveWins() throws {
        let store = try Store("file")
        let endpoint = try TokenEndpoint()
        try store.run(["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"))
        let failed = try store.run([
            "session", "get", "s", "--refresh-command", Self.sabotagingRefresh(store, endpoint),
        ])
        #expect(failed.status == 74, "\(failed.stderr)")
        try FileManager.default.removeItem(atPath: store.namespaceFile("credentials.lock"))
        let logout = try store.run(["logout"], environment: ["LATCHKEY_AGENT": "off"])
        #expect(logout.status == 0, "\(logout.stderr)")
        let kept = PendingRotationVault(appID: try AppID(store.app), directory: store.storeDirectory)
        #expect(try kept.store.list(kind: .session).isEmpty, "the logout removed the kept answer")
        let next = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        #expect(next.stdout.isEmpty && next.status != 0, "\(next.status): \(next.stderr)")
        let listed = try store.json(["session", "list"])["sessions"] as? [[String: Any]]
        #expect(listed?.isEmpty == true, "the session never came back")
        #expect(try endpoint.stats()["refreshes"] as? Int == 1)
    }
}
