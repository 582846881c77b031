import Foundation
import Latchkey
import LatchkeyCommands
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAgent

/// The agent's ``AgentVaultSource``, the one way a command the agent runs gets a vault: the
/// silence window's refusal, and the unlock cache (a passphrase held only once it opened the
/// vault, and used for that vault only). File vaults in a fresh directory; no subprocess.
@Suite("the agent's vault source: silence window and unlock cache", .sandboxed)
struct AgentVaultSourceTests {
    /// A namespace of app `tests` in `directory`.
    static func namespace(_ directory: String, backend: String?, policy: String = "built-in:default")
        -> ResolvedNamespace
    {
        ResolvedNamespace(
            storeDirectory: directory, app: "tests", policy: policy, backend: backend, sessionUnlock: "never")
    }

    /// The code of the `LatchkeyError` `body` throws; nil when it throws none.
    static func code(_ body: () throws -> Vault) -> LatchkeyError.Code? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? LatchkeyError)?.code
        }
    }

    /// A file-vault policy whose key is a passphrase, held by the agent for `cache` seconds.
    static func passphrasePolicy(in directory: String, cache: Int) throws -> String {
        let path = directory + "/passphrase-\(cache).json"
        try """
        {"version": 1, "name": "passphrase", "backend": {"kind": "file"},
         "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8}},
         "agent": {"unlockCacheSeconds": \(cache)}}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(
        "within a silence window a vault that would ask the Secret Service is refused with the missed error; a file vault opens"
    )
    func silenceWindow() throws {
        let directory = try freshDirectory()
        let missed = LatchkeyError(.timedOut, "the Secret Service did not answer within 1.5 s")
        let refused = AgentVaultSource(unlocked: UnlockCache(), failingFastWith: missed)
        for backend in ["secret-service", "auto"] {
            #expect(throws: missed) {
                try refused.vault(for: Self.namespace(directory, backend: backend), passphrase: nil, unlocking: true)
            }
        }
        #expect(refused.failedFast)
        let file = AgentVaultSource(unlocked: UnlockCache(), failingFastWith: missed)
        let vault = try file.vault(for: Self.namespace(directory, backend: "file"), passphrase: nil, unlocking: true)
        #expect(vault.openReport.backend == .file)
        #expect(!file.failedFast)
    }

    @Test(
        "a passphrase that opened the vault is held once the command has run and opens it for the next; none held, the vault needs one"
    )
    func unlockCache() throws {
        let directory = try freshDirectory()
        let namespace = Self.namespace(
            directory, backend: nil, policy: try Self.passphrasePolicy(in: directory, cache: 300))
        let unlocked = UnlockCache()
        let passphrase = SecretBytes(utf8: "correct horse")
        // The first command gives the passphrase; the vault is created with it.
        let first = AgentVaultSource(unlocked: unlocked, failingFastWith: nil)
        try first.vault(for: namespace, passphrase: passphrase, unlocking: true).saveSecret(
            SecretBytes(utf8: "v"), named: "k")
        #expect(unlocked.held.isEmpty, "held only once the command has run")
        first.finish()
        #expect(unlocked.held.count == 1)
        // The next command gives none: the held passphrase opens the vault.
        let second = AgentVaultSource(unlocked: unlocked, failingFastWith: nil)
        let secret = try second.vault(for: namespace, passphrase: nil, unlocking: true).secret(named: "k")
        #expect(secret?.value == SecretBytes(utf8: "v"))
        // Forgotten (`latchkey lock`): the vault needs its passphrase again.
        unlocked.forgetAll()
        let third = AgentVaultSource(unlocked: unlocked, failingFastWith: nil)
        #expect(Self.code { try third.vault(for: namespace, passphrase: nil, unlocking: true) } == .wrongKey)
        // A wrong passphrase opens nothing and is never held.
        let wrong = AgentVaultSource(unlocked: unlocked, failingFastWith: nil)
        #expect(
            Self.code { try wrong.vault(for: namespace, passphrase: SecretBytes(utf8: "wrong"), unlocking: true) }
                == .wrongKey)
        wrong.finish()
        #expect(unlocked.held.isEmpty)
    }
}
