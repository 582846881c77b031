#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The key behind account pseudonyms: 32 random bytes kept as a Latchkey item
/// (kind `key`, name `pseudonym`, empty account attribute) in the app's namespace.
///
/// A pseudonym is the keyed BLAKE2b hash of the account, in hex; without the key,
/// nobody who reads the attributes can test a guessed account name.
///
/// Creating the key safely:
/// - Inside one process every libsecret call is serialised, and finding or
///   creating the key happens in one such turn, so one process never makes two keys.
/// - Between processes the Secret Service offers no compare-and-swap. The key item
///   is therefore created without replacing an existing one, and when two keys
///   exist every reader takes the same one: the earliest created, ties broken by
///   the smaller key bytes. A creator reads the keys back after storing and adopts
///   that one. A split remains possible only when two processes create a key at
///   the same moment and one reads back before the other's item lands.
/// - The key is looked up on every operation rather than cached, so a `deleteAll`
///   by another instance or process (which deletes the key too) is seen at once.
struct SecretServicePseudonymKey: Sendable, Equatable {
    /// The key item's name.
    static let itemName = "pseudonym"
    /// The key's length in bytes.
    static let length = 32

    private let key: SecretBytes

    /// Wraps a key.
    /// - Parameter key: The key's 32 bytes.
    init(key: SecretBytes) {
        precondition(key.count == Self.length, "a pseudonym key is 32 bytes")
        self.key = key
    }

    /// The attributes of an app's key item.
    static func attributes(_ appID: AppID) -> [String: String] {
        SecretServiceAttributes.item(appID, kind: .key, accountPseudonym: "", name: itemName)
    }

    /// Whether an item with these attributes is a pseudonym key item.
    static func isKeyItem(_ attributes: [String: String]) -> Bool {
        attributes[SecretServiceAttributes.kind] == ItemKey.Kind.key.rawValue
            && attributes[SecretServiceAttributes.account] == ""
            && attributes[SecretServiceAttributes.name] == itemName
    }

    /// Finds the app's key.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - connection: The Secret Service.
    /// - Returns: The key, or nil when the app has none yet.
    /// - Throws: `LatchkeyError` `.locked`, `.tampered`, or what the service throws.
    static func find(_ appID: AppID, in connection: LibSecret.Connection) throws -> SecretServicePseudonymKey? {
        try choose(from: connection.envelopes(attributes(appID)))
    }

    /// Whether an envelope is a pseudonym key item's.
    static func isKeyEnvelope(_ envelope: SecretServiceEnvelope) -> Bool {
        envelope.name == itemName && envelope.account.isEmpty
    }

    /// The key every process agrees on among the pseudonym key items found:
    /// the earliest created, ties broken by the smaller key bytes.
    /// - Parameter envelopes: The payloads of the app's pseudonym key items.
    /// - Returns: The key, or nil when there is none.
    /// - Throws: `.tampered` when an item is malformed.
    static func choose(from envelopes: [SecretServiceEnvelope]) throws -> SecretServicePseudonymKey? {
        let candidates = try envelopes.map { envelope in
            guard envelope.item.value.count == length, envelope.name == itemName, envelope.account.isEmpty else {
                throw LatchkeyError(.tampered, "the Secret Service's pseudonym key item is malformed")
            }
            return envelope.item
        }
        let chosen = candidates.min { lhs, rhs in
            if lhs.created != rhs.created { return lhs.created < rhs.created }
            return lhs.value.withUnsafeBytes { l in rhs.value.withUnsafeBytes { r in l.lexicographicallyPrecedes(r) } }
        }
        return chosen.map { SecretServicePseudonymKey(key: $0.value) }
    }

    /// Finds the app's key, creating it on first need.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - connection: The Secret Service.
    /// - Returns: The key every process will use.
    /// - Throws: `LatchkeyError` `.locked`, `.tampered`, or what the service throws.
    static func findOrCreate(_ appID: AppID, in connection: LibSecret.Connection) throws -> SecretServicePseudonymKey {
        if let existing = try find(appID, in: connection) { return existing }
        try dropLostKey(appID, in: connection)
        let envelope = SecretServiceEnvelope(
            account: "", name: itemName, item: StoredItem(value: .random(count: length)))
        try connection.store(
            SecretServiceAttributes.schema, attributes(appID),
            label: SecretServiceAttributes.label(appID, kind: .key),
            secret: envelope.encoded(), replace: false)
        guard let stored = try find(appID, in: connection) else {
            throw LatchkeyError(.io, "the Secret Service did not keep the pseudonym key that was just stored")
        }
        return stored
    }

    /// Deletes a pseudonym key item the provider lost (it is there, its payload
    /// cannot be read), so a new key can be made, when the namespace holds
    /// nothing readable but key items (items whose value was lost with the key hold nothing
    /// a new key would hide). Otherwise the items
    /// stored under it could no longer be found by address, so nothing new is made.
    /// - Throws: `.tampered` when the key was lost and the namespace holds other readable items,
    ///   naming `wipe` as the way out; what the service throws.
    private static func dropLostKey(_ appID: AppID, in connection: LibSecret.Connection) throws {
        guard !(try connection.damagedPaths(attributes(appID))).isEmpty else { return }
        let all = try connection.latchkeyItems(SecretServiceAttributes.matching(appID), loadSecrets: true)
        // Key items (the audit trail's) are found by kind, never through the pseudonym key; an
        // item whose value was lost with the key (a provider stopped before it saved either)
        // holds nothing a new key would hide.
        let readable = zip(all, try LibSecret.Connection.unlockedEnvelopes(all)).filter { item, envelope in
            envelope != nil && item.attributes[SecretServiceAttributes.kind] != ItemKey.Kind.key.rawValue
        }
        guard readable.isEmpty else {
            throw LatchkeyError(
                .tampered,
                "the Secret Service lost the secret of \(appID)'s pseudonym key item (the provider kept the item without its value), so the items stored under that key cannot be found by name; erasing the namespace (`latchkey wipe --yes`, Vault.wipe()) removes them and starts afresh"
            )
        }
        for item in all where isKeyItem(item.attributes) { try connection.delete(item) }
    }

    /// The account's pseudonym: keyed BLAKE2b (`crypto_generichash`), 32 bytes, lowercase hex.
    /// - Parameter account: The account name.
    /// - Returns: 64 hexadecimal digits.
    func pseudonym(of account: String) -> String {
        Hex.encode(Sodium.keyedHash(Array(account.utf8), key: key, length: 32))
    }
}
