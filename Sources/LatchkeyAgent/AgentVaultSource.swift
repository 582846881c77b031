import Latchkey
import LatchkeyCommands
import Synchronization

/// The vaults a command the agent runs opens: the namespace's vault, opened for the command
/// with the passphrase its client sent or the one the agent holds (``UnlockCache``), its audit
/// appends made durable once the answer is sent (``AuditSyncDeferral``). Within a silence
/// window (a command of the namespace just missed the Secret Service deadline) a vault that
/// would ask the Secret Service is not opened: the command fails fast with that miss's error.
package final class AgentVaultSource: VaultSource {
    private let unlocked: UnlockCache
    private let failFast: LatchkeyError?
    /// Where the vaults' audit appends leave their `fsync` and anchor move, settled once the answer is sent.
    package let auditSync = AuditSyncDeferral()
    /// What to do once the command has run: hold a passphrase that opened its vault.
    private let afterwards = Mutex<[@Sendable () -> Void]>([])
    private let failed = Mutex(false)

    /// A source for one command.
    /// - Parameters:
    ///   - unlocked: The agent's unlock cache.
    ///   - failFast: The error to fail with at once instead of asking the Secret Service (the silence window).
    package init(unlocked: UnlockCache, failingFastWith failFast: LatchkeyError?) {
        self.unlocked = unlocked
        self.failFast = failFast
    }

    /// The error a vault that would ask the Secret Service is refused with (the silence window); nil: none.
    package var failingFast: LatchkeyError? { failFast }

    /// Whether a vault was refused because of the silence window (the command failed fast).
    package var failedFast: Bool { failed.withLock { $0 } }

    /// Holds the passphrases that opened the command's vaults, once it has run.
    package func finish() {
        let actions = afterwards.withLock { actions in
            defer { actions.removeAll() }
            return actions
        }
        for action in actions { action() }
    }

    package func vault(for namespace: ResolvedNamespace, passphrase given: SecretBytes?, unlocking: Bool) throws
        -> Vault
    {
        let policy = try VaultSettings.policy(
            given: namespace.policy, labelled: "--policy", default: .default, environment: [:]
        ).0
        let appID = try AppID(namespace.app)
        let backend = namespace.backend.flatMap(Policy.BackendChoice.init(rawValue:))
        let storeDirectory = namespace.storeDirectory
        let needsPassphrase = policy.fileKeySource == .passphrase
        if let failFast, (backend ?? policy.backend) != .file {
            failed.withLock { $0 = true }
            throw failFast
        }
        let epoch = unlocked.currentEpoch
        let given = needsPassphrase ? given : nil
        // A cached passphrase only under a policy that caches, and only for the vault it
        // opened (checked below, before it is used).
        let caches = policy.agent.unlockCacheDuration > 0
        let cached =
            given == nil && needsPassphrase && caches ? unlocked.entry(app: appID, storeDirectory: storeDirectory) : nil
        let mode =
            policy.secretServiceUnlock ?? Policy.SecretServiceUnlock(rawValue: namespace.sessionUnlock) ?? .never
        do {
            let vault = try Vault.open(
                appID: appID, policy: policy, storeDirectory: storeDirectory, backend: backend,
                passphrase: given ?? cached?.passphrase, unlock: unlocking ? mode : .never)
            auditSync.adopt(vault)
            unlocked.noteServed(app: appID, storeDirectory: storeDirectory, backend: vault.openReport.backend.rawValue)
            if needsPassphrase, vault.openReport.backend == .file {
                if let cached, try vault.fileVaultSalt() != cached.salt {
                    // Not the vault the passphrase opened (it was deleted or replaced): never used for it.
                    throw LatchkeyError(.wrongKey, "the vault of \(appID) needs its passphrase")
                }
                if let used = given ?? cached?.passphrase {
                    // A passphrase given now must open the vault there is before anything else happens.
                    if given != nil { _ = try vault.authenticatedFileVaultSalt() }
                    let unlocked = unlocked
                    afterwards.withLock {
                        $0.append { [vault] in
                            guard caches, let salt = try? vault.authenticatedFileVaultSalt() else { return }
                            unlocked.remember(
                                used, salt: salt, app: appID, storeDirectory: storeDirectory,
                                for: policy.agent.unlockCacheDuration, epoch: epoch)
                        }
                    }
                }
            }
            return vault
        } catch let error as LatchkeyError where error.code == .wrongKey && needsPassphrase && given == nil {
            // The agent holds no passphrase (or one that no longer opens the vault, which it
            // forgets; another policy's entry is left alone): the client asks for it.
            if cached != nil { unlocked.forget(app: appID, storeDirectory: storeDirectory) }
            throw error
        }
    }
}
