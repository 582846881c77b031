import Latchkey

/// `latchkey unlock`'s side of the provider's own interface (`io.github.latchkey.SecretService`
/// on `/org/freedesktop/secrets`, docs/SECRET-SERVICE-PROVIDER.md): whether Latchkey's provider
/// on the session bus is locked and which prompts wait, and the passphrase that unlocks it,
/// sent encrypted in a DH session of its own.
package final class ProviderUnlockClient {
    /// What the provider says it is waiting for.
    package struct State: Sendable {
        /// The object paths of the prompts clients showed and that wait for the passphrase.
        package let prompts: [String]
        /// Whether the vault is locked.
        package let locked: Bool
    }

    private let bus: BusConnection
    private static let interface = "io.github.latchkey.SecretService"

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`).
    /// - Throws: `LatchkeyError` `.unavailable` when GIO cannot be loaded or the bus cannot be reached.
    package init() throws {
        bus = try BusConnection()
    }

    /// Asks the provider what waits.
    /// - Throws: `LatchkeyError` `.unavailable` when no provider owns `org.freedesktop.secrets`,
    ///   or the one there is not Latchkey's.
    package func state() throws -> State {
        guard try bus.hasOwner(SecretServiceProvider.busName) else {
            throw LatchkeyError(
                .unavailable, "nobody serves the Secret Service (org.freedesktop.secrets) on the session bus")
        }
        let reply: [DBusValue?]
        do {
            reply = try bus.call(SecretServiceProvider.busName, ObjectPath.base, Self.interface, "PendingPrompts", [])
        } catch {
            throw LatchkeyError(
                .unavailable, "the Secret Service on the session bus is not Latchkey's provider (\(error.message))")
        }
        guard reply.count == 2, let prompts = reply[0]?.paths, case .boolean(let locked)? = reply[1] else {
            throw LatchkeyError(.unavailable, "Latchkey's provider gave an answer this version does not read")
        }
        return State(prompts: prompts, locked: locked)
    }

    /// Hands the provider `passphrase` in a DH session (libgcrypt, as a Secret Service client does).
    /// - Returns: The prompts it completed; nil when the passphrase is wrong.
    /// - Throws: `LatchkeyError` `.unavailable` when the provider cannot be asked or fails.
    package func unlock(_ passphrase: SecretBytes) throws -> [String]? {
        try Gcrypt.initialize()
        let pair = try Gcrypt.keyPair()
        let opened = try bus.call(
            SecretServiceProvider.busName, ObjectPath.base, "org.freedesktop.Secret.Service", "OpenSession",
            [.string(ProviderSession.dh), .variant(.bytes(pair.publicKey))])
        guard opened.count == 2, case .bytes(let peer)? = opened[0]?.unboxed, let session = opened[1]?.objectPath else {
            throw LatchkeyError(.unavailable, "Latchkey's provider did not open a session")
        }
        let key = try Gcrypt.sessionKey(privateKey: pair.privateKey, peerPublicKey: peer)
        let (iv, ciphertext) = try Gcrypt.encrypt(passphrase, key: key)
        let reply = try bus.call(
            SecretServiceProvider.busName, ObjectPath.base, Self.interface, "Unlock",
            [.tuple([.objectPath(session), .bytes(iv), .bytes(ciphertext), .string("text/plain")])])
        guard reply.count == 2, case .boolean(let unlocked)? = reply[0], let completed = reply[1]?.paths else {
            throw LatchkeyError(.unavailable, "Latchkey's provider gave an answer this version does not read")
        }
        return unlocked ? completed : nil
    }
}
