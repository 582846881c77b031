import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// `session put --grant` and `session get --refresh-command` against a real HTTP token
/// endpoint on 127.0.0.1 (scripts/token-endpoint.py), with curl as the refresh command.
@Suite("latchkey session grants", .sandboxed)
struct CLIGrantTests {
    @Test(
        "a token response on standard input is kept as one grant; session get prints its access token",
        arguments: backends)
    func putGrant(backend: String) throws {
        let store = try Store(backend)
        let response =
            #"{"access_token":"access-1","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-1","scope":"read","id_token":"ignored"}"#
        let saved = try store.run(["session", "put", "s", "--grant"], input: response)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.text.hasPrefix("saved grant s, access token expires "))
        let listed = try store.json(["session", "list"])
        #expect((listed["sessions"] as? [Any])?.count == 1, "one item holds the grant")
        let read = try store.run(["session", "get", "s"])
        #expect(read.status == 0 && read.text == "access-1\n")
    }

    @Test("a token response that is not one is refused, naming what is missing, and nothing is stored")
    func badResponse() throws {
        let store = try Store("file")
        for (input, words) in [
            (#"{"token_type":"Bearer"}"#, "has no access_token"),
            (#"{"access_token":"a"}"#, "has no token_type"),
            (#"{"access_token":"a","token_type":"Bearer","expires_in":"soon"}"#, "expires_in"),
            ("not json", "token response"),
        ] {
            let run = try store.run(["session", "put", "s", "--grant"], input: input)
            #expect(run.status == 65 && run.stderr.contains(words), "\(input): \(run.stderr)")
        }
        #expect((try store.json(["session", "list"])["sessions"] as? [Any])?.isEmpty == true)
    }

    @Test(
        "--refresh-command runs curl once when the access token expired, saves the rotated grant, and audits it",
        arguments: backends)
    func refreshWithCurl(backend: String) throws {
        let (store, endpoint) = try expiredGrant(backend)
        let refreshed = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        let stats = try endpoint.stats()
        #expect(refreshed.text == "\(stats["access_token"] as? String ?? "?")\n")
        #expect(stats["refreshes"] as? Int == 1 && stats["reuse"] as? Int == 0)
        // Valid now: the next call prints the same token without asking the endpoint.
        let again = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        let refreshes = try endpoint.stats()["refreshes"] as? Int
        #expect(again.text == refreshed.text && refreshes == 1)
        let audit = try store.run(["audit", "show"]).text
        #expect(audit.contains("session.refreshed") && !audit.contains("r0") && !audit.contains(refreshed.text))
    }

    @Test(
        "a storm: six processes, half through the agent, three rounds: one refresh a round, no reuse, all get the new token"
    )
    func storm() throws {
        let sandbox = try AgentSandbox()
        let endpoint = try TokenEndpoint(delayMilliseconds: 200)
        var refresh = "r0"
        for round in 1...3 {
            try sandbox.run(
                ["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: refresh), agent: false
            )
            let children = try (0..<6).map { index in
                let environment =
                    index.isMultiple(of: 2)
                    ? sandbox.environment : ["XDG_RUNTIME_DIR": sandbox.runtime, "LATCHKEY_AGENT": "off"]
                return try Child(
                    try latchkeyPath(),
                    sandbox.store.options + ["session", "get", "s", "--refresh-command", endpoint.refreshCommand()],
                    environment: environment)
            }
            let runs = try children.map { try $0.finish() }
            let stats = try endpoint.stats()
            let access = stats["access_token"] as? String ?? "?"
            #expect(stats["refreshes"] as? Int == round, "round \(round): \(runs.map(\.stderr))")
            #expect(stats["reuse"] as? Int == 0 && stats["revoked"] as? Bool == false)
            #expect(
                runs.allSatisfy { $0.status == 0 && $0.text == access + "\n" }, "round \(round): \(runs.map(\.stderr))")
            refresh = stats["refresh_token"] as? String ?? "?"
        }
    }

    /// A store of `backend` whose session `s` holds a grant with an expired access token and
    /// refresh token `r0`, and an endpoint whose family begins with `r0`.
    private func expiredGrant(_ backend: String, label: String = #function) throws -> (Store, TokenEndpoint) {
        let store = try Store(backend, label)
        let endpoint = try TokenEndpoint(label: label)
        try store.run(["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"))
        return (store, endpoint)
    }

    @Test("a rejected refresh (invalid_grant) exits 77, ends the session, and audit show shows it", arguments: backends)
    func rejected(backend: String) throws {
        let (store, endpoint) = try expiredGrant(backend)
        try endpoint.control(#"{"revoke": true}"#)
        let run = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        #expect(run.status == 77 && run.stderr.contains("rejected"), "\(run.stderr)")
        #expect(!run.stderr.contains("r0"))
        #expect((try store.json(["session", "list"])["sessions"] as? [Any])?.isEmpty == true)
        let audit = try store.run(["audit", "show"]).text
        #expect(audit.contains("session.refreshed") && audit.contains("refreshRejected"), "\(audit)")
    }

    @Test("an endpoint that is down or not there exits 75 and keeps the grant for the next try", arguments: backends)
    func unavailable(backend: String) throws {
        let (store, endpoint) = try expiredGrant(backend)
        try endpoint.control(#"{"down": true}"#)
        let down = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        #expect(down.status == 75, "\(down.stderr)")
        // Port 9 (discard) on 127.0.0.1 refuses the connection: curl fails (exit 7).
        let refused = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand(port: 9)])
        #expect(refused.status == 75 && refused.stderr.contains("status 7"), "\(refused.stderr)")
        #expect((try store.json(["session", "list"])["sessions"] as? [Any])?.count == 1, "the grant is kept")
        try endpoint.control(#"{"down": false}"#)
        let up = try store.run(["session", "get", "s", "--refresh-command", endpoint.refreshCommand()])
        #expect(up.status == 0, "\(up.stderr)")
        let stats = try endpoint.stats()
        #expect(stats["refreshes"] as? Int == 1 && stats["reuse"] as? Int == 0, "the kept refresh token still worked")
    }

    @Test(
        "a grant write killed at any moment leaves the old grant or the new one, whole, on both stores",
        arguments: backends)
    func atomicUnderKill(backend: String) throws {
        let store = try Store(backend)
        func response(_ number: Int) -> String {
            #"{"access_token":"access-\#(number)","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-\#(number)"}"#
        }
        func stored() throws -> Int {
            let vault = try Vault.open(
                appID: try AppID(store.app), storeDirectory: store.storeDirectory,
                backend: backend == "file" ? .file : .secretService)
            let grant = try #require(try vault.grant(named: "s", account: ""))
            let number = try #require(Int((grant.accessToken.utf8String() ?? "").dropFirst("access-".count)))
            #expect(
                grant.refreshToken?.utf8String() == "refresh-\(number)",
                "a new access token beside an old refresh token")
            return number
        }
        try store.run(["session", "put", "s", "--grant"], input: response(0))
        var last = 0
        var killedMidway = 0
        for round in 1...20 {
            let child = try Child(
                try latchkeyPath(), store.options + ["session", "put", "s", "--grant"],
                environment: ["LATCHKEY_AGENT": "off"])
            try child.input.fileHandleForWriting.write(contentsOf: Data(response(round).utf8))
            try child.input.fileHandleForWriting.close()
            // From at once (before the write starts) to well after it (a file put ends within
            // milliseconds on a quiet machine), so some kills land before, during and after the write.
            Thread.sleep(
                forTimeInterval: [0, 0.002, 0.005, 0.01, 0.02, 0.04, 0.08][round % 7] * Double.random(in: 0.5...1.5))
            kill(child.process.processIdentifier, SIGKILL)
            child.process.waitUntilExit()
            let number = try stored()
            #expect(number == last || number == round, "round \(round) left grant \(number)")
            if child.process.terminationReason == .uncaughtSignal && number == last { killedMidway += 1 }
            last = number
        }
        #expect(killedMidway > 0, "no kill landed before a write finished; the test proved nothing")
    }
}
