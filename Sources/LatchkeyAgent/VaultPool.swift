import Latchkey
import LatchkeyCommands
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The agent's open vaults, one per namespace (store directory and app): what the agent's
/// commands get their vault from (``VaultSource``).
///
/// A namespace's entry holds its open ``Vault`` (and with it the backend, the key derived
/// from a passphrase and the audit trails' keys), the passphrase that opened it, the
/// silence window after a command of the namespace missed the Secret Service deadline,
/// and the command's deferred audit appends (``Vault/AuditDurability/deferred``, made
/// durable once the answer is sent).
///
/// It keeps a vault only as long as its policy's `agent.unlockCacheSeconds` (from the last
/// command that used it): a policy that caches nothing keeps nothing past its command, and
/// `lock` (``forgetAll()``) drops every vault and passphrase. A passphrase is kept only
/// after it opened and authenticated its vault, bound to that vault's salt, and is used
/// only for that vault. A vault is kept only when its command succeeded and opening it did
/// nothing the next opening would not do again (a fallback to the encrypted file, a migration,
/// an audit warning), so a kept vault behaves as a freshly opened one. A Secret Service vault
/// is kept only while the process's watch of the bus (``SecretServiceBackend/busGeneration``)
/// saw no change since its command began (no owner change, no collection or item created,
/// changed, deleted, locked or unlocked): after one, the next command opens it anew, as a new
/// process would; without one, the next command makes opening's checks again on it, at
/// opening's step and with its errors (``Vault/resume(backend:unlock:)``). Another policy,
/// backend or unlock mode for the same store directory and app opens its own vault, which
/// replaces the entry once it is kept.
package final class VaultPool: VaultSource {
    /// One namespace's kept vault and passphrase.
    struct Entry {
        var namespace: ResolvedNamespace
        var policy: Policy
        var unlocking: Bool
        /// The open vault; nil while only its passphrase is held (its last command failed).
        var vault: Vault?
        /// The passphrase that opened the vault, and the salt of the vault it opened.
        var passphrase: (secret: SecretBytes, salt: [UInt8])?
        var until: ContinuousClock.Instant
        /// For a Secret Service vault, the bus watch's generation it holds for: used again
        /// only while the generation has not moved.
        var busMark: UInt64?
    }

    /// What the command that runs in a namespace was given.
    struct Command {
        /// How many times everything was forgotten when it began: a command that began
        /// before a ``forgetAll()`` keeps nothing.
        var epoch: UInt64
        var namespace: ResolvedNamespace
        var policy: Policy
        var unlocking: Bool
        var vault: Vault
        /// The passphrase it opened the vault with (given or held), to hold once it is authenticated.
        var passphrase: SecretBytes?
        var audit: AuditSyncDeferral
        /// The bus watch's generation when the command began, before any call it made; nil while no watch runs.
        var busMark: UInt64?
    }

    /// A namespace commands used, for `agent status`.
    struct Served {
        var app: String
        var storeDirectory: String
        var backend: String
        var last: Date
    }

    private struct State {
        var epoch: UInt64 = 0
        var entries: [String: Entry] = [:]
        var running: [String: Command] = [:]
        var served: [String: Served] = [:]
        var silence: [String: (until: ContinuousClock.Instant, failure: LatchkeyError)] = [:]

        /// Drops the entries whose time is up at `now`.
        mutating func expire(at now: ContinuousClock.Instant) {
            entries = entries.filter { $0.value.until > now }
        }
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> ContinuousClock.Instant

    /// An empty pool whose cache times and silence windows are measured by `now`.
    package init(now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.now = now
    }

    /// The vault of `namespace` for the command that runs in it: the one kept, else one opened
    /// now (with the passphrase given, else the one held for this vault when the policy caches).
    /// Each command reads the namespace's policy again, so a policy changed between two
    /// commands takes effect on the next one. A passphrase given is always used: one that
    /// does not open the vault is refused even while the right one is held.
    /// - Throws: `.wrongKey` when the vault needs a passphrase that was not given and is not
    ///   held (one that no longer opens the vault, which was replaced, is forgotten); the
    ///   policy's errors; the errors of opening the vault.
    package func vault(for namespace: ResolvedNamespace, passphrase given: SecretBytes?, unlocking: Bool) throws
        -> Vault
    {
        try vault(for: namespace, passphrase: given, unlocking: unlocking, failingFastWith: nil)
    }

    /// A vault the silence window refused (``vault(for:passphrase:unlocking:failingFastWith:)``).
    package struct FailedFast: Error {
        /// The error of the missed deadline that opened the window, which the command fails with.
        package let failure: LatchkeyError
    }

    /// The vault of `namespace` for the command that runs in it, as
    /// ``vault(for:passphrase:unlocking:)`` gives it, unless the command runs within its
    /// namespace's silence window (`failFast`, ``silentFailure(of:)`` as it began): then a
    /// vault that would ask the Secret Service (the backend chosen, by `--backend` or the
    /// policy read for the command, is not the encrypted file) is not opened.
    /// - Throws: ``FailedFast`` with `failFast` when refused; what ``vault(for:passphrase:unlocking:)`` throws.
    package func vault(
        for namespace: ResolvedNamespace, passphrase given: SecretBytes?, unlocking: Bool,
        failingFastWith failFast: LatchkeyError?
    ) throws -> Vault {
        // Sampled before anything this command asks, so that a change it does not see is seen by the next one.
        var busMark = SecretServiceBackend.busGeneration
        let policy = try VaultSettings.policy(given: namespace.policy, default: .default, environment: [:]).0
        let key = namespace.queueKey
        let choice = namespace.backend.flatMap(Policy.BackendChoice.init(rawValue:)) ?? policy.backend
        let unlock =
            unlocking
            ? policy.secretServiceUnlock ?? Policy.SecretServiceUnlock(rawValue: namespace.sessionUnlock) ?? .never
            : .never
        if let failFast, choice != .file { throw FailedFast(failure: failFast) }
        let needsPassphrase = policy.fileKeySource == .passphrase
        let caches = policy.agent.unlockCacheDuration > 0
        let (entry, epoch) = state.withLock { state -> (Entry?, UInt64) in
            state.expire(at: now())
            return (state.entries[key], state.epoch)
        }
        let same = entry.map { $0.namespace == namespace && $0.policy == policy && $0.unlocking == unlocking } ?? false
        let held = needsPassphrase && caches ? entry?.passphrase : nil
        var used = given ?? held?.secret
        let vault: Vault
        do {
            if same, let kept = entry?.vault, given == nil || given == entry?.passphrase?.secret,
                try resumes(kept, key, busMark: entry?.busMark, now: busMark, choice: choice, unlock: unlock)
            {
                vault = kept
            } else {
                // Sampled again before anything the vault opened now asks.
                busMark = SecretServiceBackend.busGeneration
                used = given ?? held?.secret
                vault = try Vault.open(
                    appID: try AppID(namespace.app), policy: policy, storeDirectory: namespace.storeDirectory,
                    backend: namespace.backend.flatMap(Policy.BackendChoice.init(rawValue:)), passphrase: used,
                    unlock: unlock)
            }
            if needsPassphrase, vault.openReport.backend == .file {
                if given == nil, let held, try vault.fileVaultSalt() != held.salt {
                    // Not the vault the passphrase opened (it was deleted or replaced): never used for it.
                    throw LatchkeyError(.wrongKey, "the vault of \(namespace.app) needs its passphrase")
                }
                // A passphrase given now must open the vault there is before anything else happens.
                if given != nil { _ = try vault.authenticatedFileVaultSalt() }
            } else {
                used = nil
            }
        } catch let error as LatchkeyError where error.code == .wrongKey && needsPassphrase && given == nil {
            // The passphrase held no longer opens the vault: it is forgotten, with the vault.
            if held != nil { state.withLock { _ = $0.entries.removeValue(forKey: key) } }
            throw error
        }
        state.withLock { state in
            let audit = state.running[key]?.audit ?? AuditSyncDeferral()
            audit.adopt(vault)
            state.running[key] = Command(
                epoch: epoch, namespace: namespace, policy: policy, unlocking: unlocking, vault: vault,
                passphrase: used, audit: audit, busMark: busMark)
            state.served[key] = Served(
                app: namespace.app, storeDirectory: namespace.storeDirectory,
                backend: vault.openReport.backend.rawValue, last: Date())
        }
        return vault
    }

    /// Whether the vault `kept` for the namespace `key` serves the command that begins: an
    /// encrypted-file vault does (each operation reads the file again); a Secret Service vault
    /// does when the bus watch saw no change since the command it was kept after began
    /// (`busMark`, against `now`) and opening's checks made again pass
    /// (``Vault/resume(backend:unlock:)``). One that does not is dropped (its passphrase stays held).
    /// - Throws: What opening would throw at the same step.
    private func resumes(
        _ kept: Vault, _ key: String, busMark: UInt64?, now: UInt64?, choice: Policy.BackendChoice,
        unlock: Policy.SecretServiceUnlock
    ) throws -> Bool {
        guard kept.openReport.backend == .secretService else { return true }
        var resumed = false
        defer {
            if !resumed { state.withLock { $0.entries[key]?.vault = nil } }
        }
        guard let busMark, busMark == now else { return false }
        // The checks' replies come after every signal the service sent before them, so a change
        // made before this command began is seen by now, even one whose signal was still on its way.
        resumed = try kept.resume(backend: choice, unlock: unlock) && SecretServiceBackend.busGeneration == now
        return resumed
    }

    /// Ends the command that ran in the namespace `key` (``ResolvedNamespace/queueKey``), once
    /// it ran: holds the passphrase that opened its vault (when the policy caches and it
    /// authenticates the vault), keeps the vault when the command succeeded and opening it left
    /// nothing to do again, and drops it otherwise.
    /// - Parameters:
    ///   - key: The namespace's key.
    ///   - succeeded: Whether the command succeeded.
    /// - Returns: The vaults whose audit appends wait for the answer to be sent (settle them then).
    package func commandEnded(_ key: String, succeeded: Bool) -> AuditSyncDeferral? {
        guard let command = state.withLock({ $0.running.removeValue(forKey: key) }) else { return nil }
        let duration = command.policy.agent.unlockCacheDuration
        guard duration > 0 else { return command.audit }
        let report = command.vault.openReport
        // A Secret Service vault holds only while the watch has seen nothing since its command
        // began; the first one a process uses starts the watch, and the next command opens anew.
        let onService = report.backend == .secretService
        let generation = SecretServiceBackend.busGeneration
        if succeeded, onService, generation == nil { command.vault.startFollowingSecretServiceBus() }
        let holds = report.backend == .file || onService && command.busMark != nil && generation == command.busMark
        let keeps =
            succeeded && holds && report.fallback == nil && report.migration == nil
            && report.secretServiceUnavailable == nil && command.vault.auditWarnings.isEmpty
        // The key is derived already: authenticating the vault again costs one read.
        let salt = command.passphrase.flatMap { _ in try? command.vault.authenticatedFileVaultSalt() }
        // A kept vault holds its keys, never the credentials its command read.
        command.vault.releaseReadContent()
        state.withLock { state in
            guard state.epoch == command.epoch else { return }
            let until = now() + .milliseconds(Int64(duration * 1000))
            var entry = state.entries[key]
            let same = entry.map {
                $0.namespace == command.namespace && $0.policy == command.policy && $0.unlocking == command.unlocking
            }
            if let passphrase = command.passphrase, let salt {
                entry = Entry(
                    namespace: command.namespace, policy: command.policy, unlocking: command.unlocking,
                    vault: keeps ? command.vault : nil, passphrase: (passphrase, salt), until: until,
                    busMark: command.busMark)
            } else if command.passphrase == nil && keeps {
                entry = Entry(
                    namespace: command.namespace, policy: command.policy, unlocking: command.unlocking,
                    vault: command.vault, passphrase: same == true ? entry?.passphrase : nil, until: until,
                    busMark: command.busMark)
            } else if same == true {
                entry?.vault = nil
            }
            state.entries[key] = entry
        }
        return command.audit
    }

    /// The error a command of the namespace `key` that starts now fails fast with: the missed
    /// deadline's, within the silence window after it; nil otherwise (the window, once over, is closed).
    package func silentFailure(of key: String) -> LatchkeyError? {
        let now = now()
        return state.withLock { state in
            guard let window = state.silence[key], now < window.until else {
                state.silence[key] = nil
                return nil
            }
            return window.failure
        }
    }

    /// Opens the silence window of the namespace `key` after a command missed the Secret
    /// Service deadline: for `duration`, the commands behind it fail fast with `failure`.
    package func silence(_ key: String, for duration: Duration, failingWith failure: LatchkeyError) {
        let until = now() + duration
        state.withLock { $0.silence[key] = (until, failure) }
    }

    /// Drops every vault and passphrase at once (`latchkey lock`, and as the agent stops); a
    /// command running now keeps nothing.
    /// - Returns: How many passphrases were held.
    @discardableResult
    package func forgetAll() -> Int {
        let dropped = state.withLock { state in
            state.epoch += 1
            defer { state.entries.removeAll() }
            return state.entries
        }
        return dropped.values.filter { $0.passphrase != nil }.count
    }

    /// Drops what reached the end of its time.
    package func expire() {
        let now = now()
        state.withLock { $0.expire(at: now) }
    }

    /// The namespaces commands used, for `agent status` (never a secret): app, store directory,
    /// the store in use, when last.
    var servedNamespaces: [Served] {
        state.withLock { Array($0.served.values) }.sorted { ($0.storeDirectory, $0.app) < ($1.storeDirectory, $1.app) }
    }

    /// The namespaces whose vault or passphrase is held, for `agent status` (never a secret):
    /// app, store directory, until when (a wall-clock time), and whether a passphrase is held.
    package var held: [(app: String, storeDirectory: String, until: Date, passphrase: Bool)] {
        let now = now()
        let entries = state.withLock { state in
            state.expire(at: now)
            return Array(state.entries.values)
        }
        return entries.sorted {
            ($0.namespace.storeDirectory, $0.namespace.app) < ($1.namespace.storeDirectory, $1.namespace.app)
        }.map { entry in
            (
                entry.namespace.app, entry.namespace.storeDirectory,
                Date(timeIntervalSinceNow: (entry.until - now) / .seconds(1)), entry.passphrase != nil
            )
        }
    }

    /// The vault kept for the namespace `key`, if any (the agent's unit tests).
    package func keptVault(_ key: String) -> Vault? {
        let now = now()
        return state.withLock { state in
            state.expire(at: now)
            return state.entries[key]?.vault
        }
    }
}
