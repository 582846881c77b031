import Foundation
import LatchkeyTestSupport
import Testing

@Suite("latchkey agent: the unlock cache holds only what it may", .sandboxed)
struct CLIAgentUnlockCacheTests {
    /// A second passphrase policy for the same store, caching `cache` seconds, with a KDF calibrated to `milliseconds`.
    static func policy(_ sandbox: AgentSandbox, _ name: String, cache: Int, milliseconds: Int = 50) throws -> String {
        let policy = sandbox.store.directory + "/\(name).json"
        try """
        {"version": 1, "name": "\(name)", "backend": {"kind": "file"},
         "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": \(milliseconds), "minimumMemoryKiB": 8}},
         "agent": {"unlockCacheSeconds": \(cache)}}
        """.write(toFile: policy, atomically: true, encoding: .utf8)
        return policy
    }

    /// A sandbox whose agent already runs, so the first command under test is not run
    /// in-process because a loaded machine started the agent late.
    static func sandboxWithAgent() throws -> AgentSandbox {
        let sandbox = try AgentSandbox()
        try sandbox.startAgent()
        return sandbox
    }

    /// A private file holding `text`.
    static func secretFile(_ sandbox: AgentSandbox, _ name: String, _ text: String) throws -> String {
        let path = sandbox.store.directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    @Test(
        "a wrong passphrase is refused: it leaves the good one cached, and is never cached itself",
        arguments: [false, true])
    func wrongPassphrase(lockedFirst: Bool) throws {
        let sandbox = try Self.sandboxWithAgent()
        let (policy, good) = try CLIAgentTests.passphrasePolicy(sandbox, cache: 900)
        let wrong = try Self.secretFile(sandbox, "wrong", "wrong horse")
        #expect(
            try sandbox.run(["--policy", policy, "--passphrase-file", good, "session", "put", "api"], input: "t")
                .status == 0)
        if lockedFirst { #expect(try latchkey(["lock"], environment: sandbox.environment).status == 0) }
        let refused = try sandbox.run(["--policy", policy, "--passphrase-file", wrong, "session", "get", "api"])
        #expect(refused.status == 77, "\(refused.stderr)")
        let status = try latchkey(["agent", "status"], environment: sandbox.environment)
        #expect(status.text.contains("it holds no vault unlocked") == lockedFirst, "\(status.text)")
        let cached = try sandbox.run(["--policy", policy, "session", "get", "api"])
        #expect(
            cached.status == (lockedFirst ? 77 : 0) && cached.text == (lockedFirst ? "" : "t\n"), "\(cached.stderr)")
    }

    @Test("a policy that does not cache never opens the vault with another policy's cached passphrase")
    func otherPolicy() throws {
        let sandbox = try Self.sandboxWithAgent()
        let (caching, passphrase) = try CLIAgentTests.passphrasePolicy(sandbox, cache: 900)
        let strict = try Self.policy(sandbox, "no-cache", cache: 0)
        #expect(
            try sandbox.run(
                ["--policy", caching, "--passphrase-file", passphrase, "session", "put", "api"], input: "t"
            )
            .status == 0)
        let refused = try sandbox.run(["--policy", strict, "session", "get", "api"])
        #expect(refused.status == 77 && refused.text.isEmpty, "\(refused.stderr)")
        #expect(try sandbox.run(["--policy", caching, "session", "get", "api"]).status == 0)
    }

    @Test("after the store is deleted, a cached passphrase never creates a new vault")
    func deletedStore() throws {
        let sandbox = try Self.sandboxWithAgent()
        let (policy, passphrase) = try CLIAgentTests.passphrasePolicy(sandbox, cache: 900)
        #expect(
            try sandbox.run(["--policy", policy, "--passphrase-file", passphrase, "session", "put", "api"], input: "t")
                .status == 0)
        try FileManager.default.removeItem(atPath: sandbox.store.storeDirectory)
        let put = try sandbox.run(["--policy", policy, "session", "put", "api"], input: "new")
        #expect(put.status == 77, "\(put.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.vaultPath))
    }

    /// The canaries found in the agent's memory.
    static func agentMemory(_ sandbox: AgentSandbox, _ canaries: [String]) throws -> [String] {
        try canariesInMemory(canaries, of: try #require(try sandbox.agentProcessID()))
    }

    @Test(
        "no passphrase or token is left in the agent's memory after lock, after expiry and with a zero cache",
        .enabled(if: getuid() == 0, "reading another process's memory needs root"))
    func nothingLeftInMemory() throws {
        let sandbox = try Self.sandboxWithAgent()
        let passphrase = "pass-canary-\(UUID().uuidString.prefix(8))"
        let token = "token-canary-\(UUID().uuidString.prefix(8))"
        let file = try Self.secretFile(sandbox, "canary", passphrase)
        for (name, cache) in [("locked", 900), ("expired", 1), ("zero", 0)] {
            let policy = try Self.policy(sandbox, name, cache: cache)
            let app = sandbox.store.app + "-" + name
            let put = try sandbox.run(
                ["--app", app, "--policy", policy, "--passphrase-file", file, "session", "put", "api"], input: token)
            #expect(put.status == 0, "\(put.stderr)")
            let get = try sandbox.run([
                "--app", app, "--policy", policy, "--passphrase-file", file, "session", "get", "api",
            ])
            #expect(get.text == token + "\n", "\(get.stderr)")
            switch name {
            case "locked": #expect(try latchkey(["lock"], environment: sandbox.environment).status == 0)
            case "expired": Thread.sleep(forTimeInterval: 1.5)
            default: break
            }
            Thread.sleep(forTimeInterval: 1)
            #expect(try Self.agentMemory(sandbox, [passphrase, token]) == [], "\(name)")
        }
    }

    @Test(
        "a lock sent while a key is being derived leaves nothing cached and nothing in memory",
        .enabled(if: getuid() == 0, "reading another process's memory needs root"))
    func lockDuringDerivation() throws {
        let sandbox = try Self.sandboxWithAgent()
        let passphrase = "pass-canary-\(UUID().uuidString.prefix(8))"
        let token = "token-canary-\(UUID().uuidString.prefix(8))"
        let file = try Self.secretFile(sandbox, "canary", passphrase)
        let policy = try Self.policy(sandbox, "slow", cache: 900, milliseconds: 1500)
        let put = try sandbox.run(
            ["--policy", policy, "--passphrase-file", file, "session", "put", "api"], input: token)
        #expect(put.status == 0, "\(put.stderr)")
        #expect(try latchkey(["lock"], environment: sandbox.environment).status == 0)
        let get = try CLIAgentRequestTests.start(
            sandbox, ["--policy", policy, "--passphrase-file", file, "session", "get", "api"])
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try latchkey(["lock"], environment: sandbox.environment).status == 0)
        let got = try get.finish()
        #expect(got.status == 0, "\(got.stderr)")
        let status = try latchkey(["agent", "status"], environment: sandbox.environment)
        #expect(status.text.contains("it holds no vault unlocked"), "\(status.text)")
        #expect(try sandbox.run(["--policy", policy, "session", "get", "api"]).status == 77)
        Thread.sleep(forTimeInterval: 1)
        #expect(try Self.agentMemory(sandbox, [passphrase, token]) == [])
    }
}
