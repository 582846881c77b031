// Latchkey's searches over one Secret Service connection: its own schema, the
// locked-collection rules, and the payload envelopes. Shared by the backend and
// the pseudonym key.

extension LibSecret.Connection {
    /// Searches Latchkey's items (`secret_service_search_sync`, never unlocking),
    /// and never mistakes a locked collection for an absent item.
    /// - Throws: `.locked` when an item found is locked, or when nothing was found
    ///   and the default collection is locked (a provider may not find locked items).
    func latchkeyItems(_ attributes: [String: String], loadSecrets: Bool) throws -> [LibSecret.Item] {
        let items = try search(SecretServiceAttributes.schema, attributes, loadSecrets: loadSecrets)
        try Self.requireUnlocked(items)
        if items.isEmpty, try isDefaultCollectionLocked() {
            throw LatchkeyError(.locked, "the Secret Service's default collection is locked")
        }
        return items
    }

    /// The payloads of the items matching `attributes`, read by D-Bus path
    /// without an item proxy each (the fast path for reads), never unlocking.
    /// A payload that cannot be decoded (a provider that lost what it acknowledged
    /// keeps the item with an empty secret) is not among them: see ``damagedPaths(_:)``.
    /// - Throws: `.locked` when a matching item is locked, or when nothing was
    ///   found and the default collection is locked; `.io` when an unlocked item came without its secret.
    func envelopes(_ attributes: [String: String]) throws -> [SecretServiceEnvelope] {
        try readableSecrets(attributes).compactMap { try? SecretServiceEnvelope(decoding: $0.secret, path: $0.path) }
    }

    /// The D-Bus paths of the items matching `attributes` whose payload cannot be decoded.
    /// - Throws: As ``envelopes(_:)``.
    func damagedPaths(_ attributes: [String: String]) throws -> [String] {
        try readableSecrets(attributes).compactMap {
            (try? SecretServiceEnvelope(decoding: $0.secret, path: $0.path)) == nil ? $0.path : nil
        }
    }

    /// The secrets of the unlocked items matching `attributes`, never unlocking.
    /// - Throws: As ``envelopes(_:)``.
    private func readableSecrets(_ attributes: [String: String]) throws -> [(path: String, secret: SecretBytes)] {
        let (secrets, locked) = try secrets(SecretServiceAttributes.schema, attributes)
        guard locked == 0 else {
            guard try isDefaultCollectionLocked() else {
                // The collection is open but its items are locked for this program: the
                // provider confirms each client's access (KeePassXC's "Confirm when
                // passwords are retrieved by clients"), and Latchkey never asks for a prompt.
                throw LatchkeyError(
                    .locked,
                    "the Secret Service keeps the items locked for this program until access is confirmed (a provider setting such as KeePassXC's \"Confirm when passwords are retrieved by clients\"); Latchkey never asks for an unlock prompt"
                )
            }
            throw LatchkeyError(.locked, "the Secret Service collection holding the items is locked")
        }
        if secrets.isEmpty, try isDefaultCollectionLocked() {
            throw LatchkeyError(.locked, "the Secret Service's default collection is locked")
        }
        return secrets
    }

    /// The payload of the item at `path` when it is still there and readable, else nil
    /// (gone, locked, malformed, or the call failed). The caller then searches, and the
    /// search reports what is wrong (`.locked`, `.tampered`, `.timedOut`) or finds the item.
    func envelope(atPath path: String) -> SecretServiceEnvelope? {
        guard let found = try? secrets(atPath: path), found.count == 1, found[0].path == path else { return nil }
        return try? SecretServiceEnvelope(decoding: found[0].secret, path: path)
    }

    /// Throws `.locked` when any item is locked: Latchkey never asks to unlock.
    static func requireUnlocked(_ items: [LibSecret.Item]) throws {
        guard items.allSatisfy({ !$0.isLocked }) else {
            throw LatchkeyError(.locked, "the Secret Service collection holding the items is locked")
        }
    }

    /// Decodes the payloads of unlocked items, in order; nil for a payload that cannot be decoded.
    /// - Throws: `.locked` when any item is locked, `.io` when an unlocked item came without its secret.
    static func unlockedEnvelopes(_ items: [LibSecret.Item]) throws -> [SecretServiceEnvelope?] {
        try requireUnlocked(items)
        return try items.map { item in
            guard let secret = item.secret else { throw LibSecret.withoutSecret("1", "secret_item_get_secret") }
            return try? SecretServiceEnvelope(decoding: secret)
        }
    }
}
