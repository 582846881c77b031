import Foundation
import LatchkeyTestSupport
import Testing

@Suite("latchkey agent: edges")
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
}
