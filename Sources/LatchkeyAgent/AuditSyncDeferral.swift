import Latchkey
import Synchronization

/// The vaults a command the agent runs used (from its ``VaultPool``), whose audit entries
/// wait for the command's answer to be sent before they are made durable
/// (``Latchkey/Vault/AuditDurability/deferred``), so that a client does not wait for the disk.
package final class AuditSyncDeferral: Sendable {
    private let vaults = Mutex<[Vault]>([])

    /// A deferral with no vault to settle.
    package init() {}

    /// Makes `vault` defer its audit entries until ``settle()``.
    package func adopt(_ vault: Vault) {
        vault.auditDurability = .deferred
        vaults.withLock { $0.append(vault) }
    }

    /// Makes every deferred entry durable (``Latchkey/Vault/settleAudit()``); call it
    /// once the command's answer is sent.
    /// - Returns: What failed, by trail, for the agent's log.
    package func settle() -> [(path: String, error: LatchkeyError)] {
        let vaults = vaults.withLock { vaults in
            defer { vaults.removeAll() }
            return vaults
        }
        return vaults.flatMap { $0.settleAudit().map { ($0.path, $0.error) } }
    }
}
