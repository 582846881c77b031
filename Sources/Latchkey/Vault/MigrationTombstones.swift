#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The deletions made while a file vault awaits the end of its migration and cannot be
/// opened (its passphrase was not given), so that the open that finishes the migration
/// never copies a deleted item back: a key-file vault of their own in the namespace's
/// directory (`tombstones.vault`, `.key`, `.lock`, `docs/FILE-FORMAT.md`), written
/// atomically and durably under its lock before the deletion it stands for is made, and
/// readable without the passphrase.
///
/// A tombstone names what it covers field by field, each one a keyed BLAKE2b pseudonym
/// (under a random key kept in the same vault, never an account or a name in clear), or
/// "any": one item, all sessions of an account (a logout), or everything (a wipe). It
/// covers a file vault item created no later than the deletion, so an item of a later
/// fallback is never covered. The vault is destroyed with the file vault it guards.
struct MigrationTombstones {
    /// What a deletion covers: each field, or any when nil.
    struct Pattern: Equatable {
        var kind: ItemKey.Kind?
        var account: String?
        var name: String?

        /// Exactly `key`.
        static func item(_ key: ItemKey) -> Pattern { Pattern(kind: key.kind, account: key.account, name: key.name) }
        /// Every item of the namespace.
        static let everything = Pattern()
    }

    /// The key-file vault that keeps the tombstones.
    let store: EncryptedFileBackend

    /// The tombstones of `appID`'s namespace in `directory`.
    init(appID: AppID, directory: String) {
        store = EncryptedFileBackend.tombstones(appID: appID, directory: directory)
    }

    /// The item holding the pseudonym key.
    static let keyItem = ItemKey(kind: .key, name: "tombstones")
    /// The word that stands for "any" in an entry's name.
    private static let any = "*"

    /// Records, durably, that what `patterns` cover was deleted at `time`. Call it before
    /// the deletion, so a crash between the two can only leave a tombstone for an item
    /// still there (which voids the file's copy alone, never the item in use).
    func record(_ patterns: [Pattern], at time: Date) throws {
        guard !patterns.isEmpty else { return }
        try store.update { items in
            let key = EncryptedFileBackend.digestKey(at: Self.keyItem, in: &items)
            for pattern in patterns {
                let entry = Self.entry(pattern, key: key)
                // The latest deletion is the one that counts.
                if let earlier = items[entry], earlier.created >= time { continue }
                items[entry] = StoredItem(value: SecretBytes(), created: time)
            }
            return true
        }
    }

    /// Whether a tombstone covers `item` at `key`: one whose pattern matches the key,
    /// made when or after the item was created.
    /// - Returns: A test for each file vault item (no tombstone: one that covers nothing).
    /// - Throws: `LatchkeyError` when the tombstones cannot be read (never taken as none).
    func matcher() throws -> (ItemKey, StoredItem) -> Bool {
        guard try store.vaultExists(), let key = try store.read(Self.keyItem)?.value else { return { _, _ in false } }
        var deleted: [ItemKey: Date] = [:]
        for entry in try store.list(kind: .setting) {
            if let stone = try store.read(entry) { deleted[entry] = stone.created }
        }
        return { itemKey, item in
            let kind = itemKey.kind.rawValue
            let account = Self.pseudonym(itemKey.account, key: key)
            let name = Self.pseudonym(itemKey.name, key: key)
            for kindField in [kind, Self.any] {
                for accountField in [account, Self.any] {
                    for nameField in [name, Self.any] {
                        let entry = ItemKey(kind: .setting, name: "\(kindField)/\(accountField)/\(nameField)")
                        if let time = deleted[entry], time >= item.created { return true }
                    }
                }
            }
            return false
        }
    }

    /// Destroys the tombstones and their key (once the file vault they guard is gone).
    func destroy() throws {
        try store.deleteAll()
    }

    /// The entry standing for `pattern`: kind, account pseudonym, name pseudonym, `*` for any.
    private static func entry(_ pattern: Pattern, key: SecretBytes) -> ItemKey {
        let kind = pattern.kind?.rawValue ?? any
        let account = pattern.account.map { pseudonym($0, key: key) } ?? any
        let name = pattern.name.map { pseudonym($0, key: key) } ?? any
        return ItemKey(kind: .setting, name: "\(kind)/\(account)/\(name)")
    }

    /// The keyed BLAKE2b pseudonym of a field (16 bytes, hex).
    private static func pseudonym(_ text: String, key: SecretBytes) -> String {
        let message = Array("latchkey.tombstone.v1".utf8) + [0] + Array(CanonicalText.nfc(text).utf8)
        return Hex.encode(Sodium.keyedHash(message, key: key, length: 16))
    }
}
