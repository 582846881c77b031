import Latchkey
import LatchkeyCommands
import Synchronization

/// The vaults one command the agent runs gets: its namespace's vault from the agent's pool
/// (``VaultPool``), unless the namespace is in a silence window (a command of it just missed
/// the Secret Service deadline): then the pool opens no vault that would ask the Secret
/// Service, and the command fails fast with that miss's error.
package final class AgentVaultSource: VaultSource {
    private let pool: VaultPool
    private let failFast: LatchkeyError?
    private let failed = Mutex(false)

    /// A source for one command.
    /// - Parameters:
    ///   - pool: The agent's open vaults.
    ///   - failFast: The error to fail with at once instead of asking the Secret Service (the silence window).
    package init(pool: VaultPool, failingFastWith failFast: LatchkeyError?) {
        self.pool = pool
        self.failFast = failFast
    }

    /// The error a vault that would ask the Secret Service is refused with (the silence window); nil: none.
    package var failingFast: LatchkeyError? { failFast }

    /// Whether a vault was refused because of the silence window (the command failed fast).
    package var failedFast: Bool { failed.withLock { $0 } }

    package func vault(for namespace: ResolvedNamespace, passphrase: SecretBytes?, unlocking: Bool) throws -> Vault {
        do {
            return try pool.vault(
                for: namespace, passphrase: passphrase, unlocking: unlocking, failingFastWith: failFast)
        } catch let refused as VaultPool.FailedFast {
            failed.withLock { $0 = true }
            throw refused.failure
        }
    }
}
