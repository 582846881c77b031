import Latchkey
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The passphrases of the vaults the agent holds unlocked, each until the end
/// of its policy's `agent.unlockCacheSeconds`; with them, the keys Argon2id
/// derived from them (``DerivedKeyCache``), so a vault is not stretched again.
/// Every passphrase and key is a ``SecretBytes``, zeroed when forgotten.
final class UnlockCache: Sendable {
    /// One unlocked namespace.
    struct Entry: Sendable {
        var app: AppID
        var storeDirectory: String
        var passphrase: SecretBytes
        var until: ContinuousClock.Instant

        /// When it stops being held, as a wall-clock time for `agent status`.
        var untilDate: Date { Date(timeIntervalSinceNow: (until - .now) / .seconds(1)) }
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// The namespaces commands used through the agent: app, store directory, the store in use, when last.
    private let served = Mutex<[String: (app: AppID, storeDirectory: String, backend: String, last: Date)]>([:])

    /// Notes that a command used the namespace, for `agent status`.
    func noteServed(app: AppID, storeDirectory: String, backend: String) {
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

    /// The passphrase held for the namespace, unless its time is up.
    func passphrase(app: AppID, storeDirectory: String) -> SecretBytes? {
        expire()
        return entries.withLock { $0[Self.address(app, storeDirectory)]?.passphrase }
    }

    /// Holds `passphrase` for `seconds` (nothing when 0), from now.
    func remember(_ passphrase: SecretBytes, app: AppID, storeDirectory: String, for seconds: TimeInterval) {
        guard seconds > 0 else {
            forget(app: app, storeDirectory: storeDirectory)
            return
        }
        let entry = Entry(
            app: app, storeDirectory: storeDirectory, passphrase: passphrase,
            until: .now + .milliseconds(Int64(seconds * 1000)))
        entries.withLock { $0[Self.address(app, storeDirectory)] = entry }
    }

    /// Forgets the namespace's passphrase.
    func forget(app: AppID, storeDirectory: String) {
        _ = entries.withLock { $0.removeValue(forKey: Self.address(app, storeDirectory)) }
        keepOnlyHeldKeys()
    }

    /// Forgets every passphrase and derived key at once (`latchkey lock`).
    /// - Returns: How many namespaces were held.
    @discardableResult
    func forgetAll() -> Int {
        let count = entries.withLock { entries in
            defer { entries.removeAll() }
            return entries.count
        }
        DerivedKeyCache.shared.forgetAll()
        return count
    }

    /// Forgets what has reached the end of its time.
    func expire() {
        let now = ContinuousClock.now
        let expired = entries.withLock { entries in
            let before = entries.count
            entries = entries.filter { $0.value.until > now }
            return entries.count != before
        }
        if expired { keepOnlyHeldKeys() }
    }

    /// The namespaces held, for `agent status` (never a passphrase).
    var held: [Entry] {
        expire()
        return entries.withLock { Array($0.values) }.sorted {
            ($0.storeDirectory, $0.app.rawValue) < ($1.storeDirectory, $1.app.rawValue)
        }
    }

    /// Drops the derived keys of passphrases no longer held.
    private func keepOnlyHeldKeys() {
        DerivedKeyCache.shared.keepOnly(derivedFrom: entries.withLock { $0.values.map(\.passphrase) })
    }
}
