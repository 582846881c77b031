import Testing

@testable import Latchkey

@Suite("The built-in default policy, built as a value", .sandboxed)
struct PolicyDefaultValueTests {
    @Test("Policy.default equals policy/default.json as parsed, rule for rule, and says it is built in")
    func equalsParsedFile() throws {
        let parsed = try Policy(contentsOfFile: repositoryRoot + "/policy/default.json")
        let embedded = try Policy(jsonData: Array(Policy.defaultJSON.utf8), source: "built-in:default")
        #expect(Policy.default == parsed)
        #expect(Policy.default == embedded)
        // Equality ignores the source; the value still names where it came from.
        #expect(Policy.default.source == "built-in:default")
        #expect(Policy.default.audit.retention == AuditRetention(maxEntries: 10_000, maxAge: 365 * 86_400))
        #expect(Policy.default.kdf == nil && Policy.default.fileKeySource == .keyfile)
    }

    @Test("built-in policies are found by name, and only those", arguments: ["default", "strict", "shared-device"])
    func byName(name: String) throws {
        let policy = try #require(Policy.builtIn(named: name))
        #expect(policy.name == name && policy.source == "built-in:\(name)")
        #expect(Policy.builtIn(named: name + "x") == nil)
    }
}
