import Foundation
import Glibc
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

    @Test("through the agent, the refresh command is the client's child, never the agent's (protocol version 4)")
    func runsInTheClient() throws {
        let sandbox = try AgentSandbox()
        let agent = try sandbox.startAgent()
        let put = try sandbox.run(
            ["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"), agent: false)
        #expect(put.status == 0, "\(put.stderr)")
        let parent = sandbox.store.directory + "/parent"
        let answer = #"{"access_token":"rotated","token_type":"Bearer","expires_in":3600,"refresh_token":"r1"}"#
        let child = try Child(
            try latchkeyPath(),
            sandbox.store.options + [
                "session", "get", "s", "--refresh-command",
                "cat >/dev/null; echo $PPID > '\(parent)'; printf '%s' '\(answer)'",
            ],
            environment: sandbox.environment)
        let client = child.process.processIdentifier
        let run = try child.finish()
        #expect(run.status == 0 && run.text == "rotated\n", "\(run.stderr)")
        let seen = try String(contentsOfFile: parent, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(seen == String(client) && seen != String(agent), "the refresh command's parent: \(seen)")
        let shown = try sandbox.run(["audit", "show"], agent: false).text
        #expect(shown.contains("session.refreshed"), "the agent saved the rotated grant: \(shown)")
        #expect(try sandbox.agentProcessID() == agent)
    }

    @Test(
        "the tokens of a rotation (the old access and refresh tokens, the new refresh token) are not left in the agent's memory",
        .enabled(if: getuid() == 0, "reading another process's memory needs root"), arguments: backends)
    func rotationLeavesNoToken(backend: String) throws {
        let sandbox = try AgentSandbox(backend)
        try sandbox.startAgent()
        let mark = UUID().uuidString.prefix(8)
        let (oldAccess, oldRefresh, newRefresh) = ("old-access-\(mark)", "old-refresh-\(mark)", "new-refresh-\(mark)")
        // Tokens of a few KiB, as some providers issue (JWTs): what copies them is not reused at once.
        let padding = String(repeating: "x", count: 3000)
        let put = try sandbox.run(
            ["session", "put", "s", "--grant"],
            input: TokenEndpoint.expiredResponse(refresh: oldRefresh + padding, access: oldAccess + padding),
            agent: false)
        #expect(put.status == 0, "\(put.stderr)")
        // The answer comes from a file, as from an endpoint: the command line holds no token.
        let answer = sandbox.store.directory + "/answer.json"
        try
            #"{"access_token":"new-access","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(newRefresh + padding)"}"#
            .write(toFile: answer, atomically: true, encoding: .utf8)
        let refreshed = try sandbox.run(["session", "get", "s", "--refresh-command", "cat >/dev/null; cat '\(answer)'"])
        #expect(refreshed.status == 0 && refreshed.text == "new-access\n", "\(refreshed.stderr)")
        let shown = try sandbox.run(["audit", "show"], agent: false).text
        #expect(shown.contains("session.refreshed"), "the agent refreshed: \(shown)")
        let pid = try #require(try sandbox.agentProcessID())
        let afterRotation = try canariesInMemory([oldAccess, oldRefresh, newRefresh], of: pid)
        #expect(afterRotation.isEmpty, "left in the agent's memory after the rotation: \(afterRotation)")
        for _ in 0..<20 { #expect(try sandbox.run(["session", "get", "s"]).text == "new-access\n") }
        #expect(try latchkey(["lock"], environment: sandbox.environment).status == 0)
        let left = try canariesInMemory([oldAccess, oldRefresh, newRefresh], of: pid)
        #expect(left.isEmpty, "left in the agent's memory: \(left)")
    }
}
