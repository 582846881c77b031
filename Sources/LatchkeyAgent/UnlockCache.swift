import Latchkey
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The passphrases of the vaults the agent holds unlocked, each until the end
/// of its policy's `agent.unlockCacheSeconds`. (The key Argon2id derives from a
/// passphrase is kept by the open `Vault` alone, and goes when the vault is dropped.)
/// A passphrase is kept only after it opened and authenticated its vault, bound
/// to that vault's salt, and is used only for that vault and under a policy that
/// caches. Every passphrase and key is a ``SecretBytes``, zeroed when forgotten.
package final class UnlockCache: Sendable {
    /// One unlocked namespace.
    struct Entry: Sendable {
        var app: AppID
        var storeDirectory: String
        var passphrase: SecretBytes
        /// The salt of the vault it opened: it is used for that vault only.
        var salt: [UInt8]
        var until: ContinuousClock.Instant

        /// When it stops being held, as a wall-clock time for `agent status`.
        var untilDate: Date { Date(timeIntervalSinceNow: (until - .now) / .seconds(1)) }
    }

    /// How many times everything was forgotten: a command that began before a
    /// ``forgetAll()`` (its key derivation still running as `lock` came) keeps nothing.
    private let epoch = Mutex<UInt64>(0)

    /// The current epoch, taken as a command starts to open a vault.
    package var currentEpoch: UInt64 { epoch.withLock { $0 } }

    private let entries = Mutex<[String: Entry]>([:])
    /// The namespaces commands used through the agent: app, store directory, the store in use, when last.
    private let served = Mutex<[String: (app: AppID, storeDirectory: String, backend: String, last: Date)]>([:])

    /// Notes that a command used the namespace, for `agent status`.
    package func noteServed(app: AppID, storeDirectory: String, backend: String) {
        served.withLock { $0[Self.address(app, storeDirectory)] = (app, storeDirectory, backend, Date()) }
    }

    /// The namespaces commands used through the agent, for `agent status` (never a secret).
    var servedNamespaces: [(app: AppID, storeDirectory: String, backend: String, last: Date)] {
        served.withLock { Array($0.values) }.sorted {
            ($0.storeDirectory, $0.app.rawValue) < ($1.storeDirectory, $1.app.rawValue)
        }
    }

    private static func address(_ app: AppID, _ storeDirectory: String) -> String {
        storeDirectory + "\u{0}" + app.rawValue
    }

    /// The passphrase held for the namespace and the salt of the vault it opened,
    /// unless its time is up. Use it only for a vault with that salt.
    package func entry(app: AppID, storeDirectory: String) -> (passphrase: SecretBytes, salt: [UInt8])? {
        expire()
        return entries.withLock { entries in
            entries[Self.address(app, storeDirectory)].map { ($0.passphrase, $0.salt) }
        }
    }

    /// Holds `passphrase`, which opened the vault with `salt`, for `seconds` from now;
    /// nothing when `seconds` is 0 or everything was forgotten since `epoch`.
    package func remember(
        _ passphrase: SecretBytes, salt: [UInt8], app: AppID, storeDirectory: String, for seconds: TimeInterval,
        epoch began: UInt64
    ) {
        guard seconds > 0 else { return }
        let entry = Entry(
            app: app, storeDirectory: storeDirectory, passphrase: passphrase, salt: salt,
            until: .now + .milliseconds(Int64(seconds * 1000)))
        epoch.withLock { epoch in
            guard epoch == began else { return }
            entries.withLock { $0[Self.address(app, storeDirectory)] = entry }
        }
    }

    /// Forgets the namespace's passphrase.
    package func forget(app: AppID, storeDirectory: String) {
        _ = entries.withLock { $0.removeValue(forKey: Self.address(app, storeDirectory)) }
    }

    /// Forgets every passphrase at once (`latchkey lock`).
    /// - Returns: How many namespaces were held.
    @discardableResult
    func forgetAll() -> Int {
        let count = epoch.withLock { epoch in
            epoch += 1
            return entries.withLock { entries in
                defer { entries.removeAll() }
                return entries.count
            }
        }
        return count
    }

    /// Forgets what has reached the end of its time.
    func expire() {
        let now = ContinuousClock.now
        entries.withLock { entries in entries = entries.filter { $0.value.until > now } }
    }

    /// The namespaces held, for `agent status` (never a passphrase).
    var held: [Entry] {
        expire()
        return entries.withLock { Array($0.values) }.sorted {
            ($0.storeDirectory, $0.app.rawValue) < ($1.storeDirectory, $1.app.rawValue)
        }
    }
}
