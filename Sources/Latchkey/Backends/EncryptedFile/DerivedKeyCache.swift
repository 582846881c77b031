import Synchronization

/// The keys Argon2id derived from passphrases, kept by a long-lived process (the
/// agent) so a vault it opens again is not stretched again. Off unless
/// ``enable()`` is called: a command-line process derives every time.
///
/// An entry is found by the vault's salt and KDF parameters and is used only
/// when the passphrase given is the one it was derived from (compared in
/// constant time); ``forgetAll()`` zeroes every entry at once (`latchkey lock`,
/// the end of the unlock cache time).
package final class DerivedKeyCache: Sendable {
    /// The process's cache.
    package static let shared = DerivedKeyCache()

    private struct Address: Hashable {
        var salt: [UInt8]
        var opsLimit: UInt64
        var memoryLimit: Int
        var length: Int
    }

    /// Whether keys are kept, the keys, and how many times everything was forgotten (a
    /// derivation that began before a ``forgetAll()`` keeps nothing).
    private let state = Mutex<
        (enabled: Bool, entries: [Address: (passphrase: SecretBytes, key: SecretBytes)], epoch: UInt64)
    >((false, [:], 0))

    /// Starts keeping derived keys.
    package func enable() {
        state.withLock { $0.enabled = true }
    }

    /// Forgets every key (each zeroed as it is released).
    package func forgetAll() {
        state.withLock {
            $0.entries.removeAll()
            $0.epoch += 1
        }
    }

    /// Forgets every key not derived from one of `passphrases`.
    package func keepOnly(derivedFrom passphrases: [SecretBytes]) {
        state.withLock { state in
            state.entries = state.entries.filter { entry in passphrases.contains { $0 == entry.value.passphrase } }
        }
    }

    /// The key Argon2id derives from `passphrase` with `salt` and the limits:
    /// the kept one when there is one for this passphrase, else derived (and
    /// kept when the cache is enabled).
    func deriveKey(length: Int, passphrase: SecretBytes, salt: [UInt8], opsLimit: UInt64, memoryLimit: Int) throws
        -> SecretBytes
    {
        let address = Address(salt: salt, opsLimit: opsLimit, memoryLimit: memoryLimit, length: length)
        let (kept, epoch) = state.withLock { state -> (SecretBytes?, UInt64) in
            guard state.enabled, let entry = state.entries[address], entry.passphrase == passphrase else {
                return (nil, state.epoch)
            }
            return (entry.key, state.epoch)
        }
        if let kept { return kept }
        let key = try Sodium.deriveKey(
            length: length, passphrase: passphrase, salt: salt, opsLimit: opsLimit, memoryLimit: memoryLimit)
        state.withLock { state in
            if state.enabled && state.epoch == epoch { state.entries[address] = (passphrase, key) }
        }
        return key
    }
}
