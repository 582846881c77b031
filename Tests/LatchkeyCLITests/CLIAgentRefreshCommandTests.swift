import Foundation
import LatchkeyTestSupport
import Testing

/// `session get --refresh-command` runs its command where the client is: with the client's
/// environment, working directory and standard error, through the agent as in-process.
@Suite("latchkey agent: a refresh command runs in its client's world", .sandboxed)
struct CLIAgentRefreshCommandTests {
    @Test(
        "a refresh command sees the client's environment and working directory and writes to its standard error, never to agent.log",
        arguments: [false, true])
    func clientWorld(agent: Bool) throws {
        let sandbox = try AgentSandbox()
        if agent { try sandbox.startAgent() }
        let put = try sandbox.run(
            ["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"), agent: false)
        #expect(put.status == 0, "\(put.stderr)")
        let directory = sandbox.store.directory + "/work"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let answer = #"{"access_token":"rotated","token_type":"Bearer","expires_in":3600,"refresh_token":"r1"}"#
        // Relative paths, a variable of the client's shell, and a message on standard error.
        let command =
            #"read -r token; printf '%s' "$CLIENT_SECRET" > seen-secret; pwd -P > seen-directory; "#
            + #"echo "refresh command says $token-canary" >&2; printf '%s' '\#(answer)'"#
        var environment = agent ? sandbox.environment : ["LATCHKEY_AGENT": "off"]
        environment["CLIENT_SECRET"] = "client-secret-canary"
        let run = try Child(
            try latchkeyPath(), sandbox.store.options + ["session", "get", "s", "--refresh-command", command],
            environment: environment, directory: directory
        ).finish()
        #expect(run.status == 0 && run.text == "rotated\n", "agent \(agent): \(run.stderr)")
        #expect(run.stderr.contains("refresh command says r0-canary"), "agent \(agent): \(run.stderr)")
        let secret = try? String(contentsOfFile: directory + "/seen-secret", encoding: .utf8)
        #expect(secret == "client-secret-canary", "agent \(agent)")
        let seen = try? String(contentsOfFile: directory + "/seen-directory", encoding: .utf8)
        let real = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        #expect(seen == real + "\n", "agent \(agent): \(seen ?? "nothing")")
        if agent {
            #expect(try sandbox.agentProcessID() != nil)
            let log = (try? String(contentsOfFile: sandbox.log, encoding: .utf8)) ?? ""
            #expect(!log.contains("canary"), "\(log)")
            let shown = try sandbox.run(["audit", "show"], agent: false).text
            #expect(shown.contains("session.refreshed"), "\(shown)")
        }
    }
}
