import Foundation
import Latchkey
import LatchkeyCommands
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAgent

/// The agent's ``AgentVaultSource``, the one way a command the agent runs gets a vault: the
/// silence window's refusal before the pool is asked (the pool itself: VaultPoolTests). File
/// vaults in a fresh directory; no subprocess.
@Suite("the agent's vault source: the silence window", .sandboxed)
struct AgentVaultSourceTests {
    /// A namespace of app `tests` in `directory`.
    static func namespace(_ directory: String, backend: String?, policy: String = "built-in:default")
        -> ResolvedNamespace
    {
        ResolvedNamespace(
            storeDirectory: directory, app: "tests", policy: policy, backend: backend, sessionUnlock: "never")
    }

    @Test(
        "within a silence window a vault that would ask the Secret Service is refused with the missed error; a file vault opens"
    )
    func silenceWindow() throws {
        let directory = try freshDirectory()
        let missed = LatchkeyError(.timedOut, "the Secret Service did not answer within 1.5 s")
        let refused = AgentVaultSource(pool: VaultPool(now: { .now }), failingFastWith: missed)
        for backend in ["secret-service", "auto"] {
            #expect(throws: missed) {
                try refused.vault(for: Self.namespace(directory, backend: backend), passphrase: nil, unlocking: true)
            }
        }
        #expect(refused.failedFast)
        let file = AgentVaultSource(pool: VaultPool(now: { .now }), failingFastWith: missed)
        let vault = try file.vault(for: Self.namespace(directory, backend: "file"), passphrase: nil, unlocking: true)
        #expect(vault.openReport.backend == .file)
        #expect(!file.failedFast)
    }
}
