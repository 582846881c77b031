#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes and decodes the entry table, the plaintext inside a vault's
/// ciphertext (see `docs/FILE-FORMAT.md`, "Entry table"). The encoding is
/// written straight into zeroing memory; nothing secret passes through an array.
enum VaultTable {
    /// The bytes of an entry besides its kind, account, name and value.
    static let fixedEntryLength = 2 + 4 + 4 + 4 + 8 + 1 + 8
    static let hasExpiry: UInt8 = 1

    /// The longest kind name the format can hold.
    static let maximumKindLength = 255

    /// Checks that `key` and `item` can be stored.
    /// - Throws: `.invalidInput` when the kind is empty or longer than 255 bytes,
    ///   or the account, name or value is 4 GiB or longer.
    static func validate(_ key: ItemKey, _ item: StoredItem) throws {
        guard (1...maximumKindLength).contains(key.kind.rawValue.utf8.count) else {
            throw LatchkeyError(.invalidInput, "item kind must be 1 to \(maximumKindLength) bytes of UTF-8")
        }
        guard [key.account.utf8.count, key.name.utf8.count, item.value.count].allSatisfy({ $0 <= UInt32.max }) else {
            throw LatchkeyError(.invalidInput, "an item's account, name and value must each be shorter than 4 GiB")
        }
    }

    /// The length of the table holding `items`, in bytes.
    static func encodedLength(_ items: [ItemKey: StoredItem]) -> Int {
        var length = 4
        for (key, item) in items {
            length +=
                fixedEntryLength + key.kind.rawValue.utf8.count + key.account.utf8.count
                + key.name.utf8.count + item.value.count
        }
        return length
    }

    /// The table holding `items`, as secret bytes.
    static func encode(_ items: [ItemKey: StoredItem]) -> SecretBytes {
        SecretBytes(count: encodedLength(items)) { out in
            var writer = ByteWriter(out)
            writer.write(UInt32(items.count))
            for (key, item) in items {
                writer.write(UInt16(key.kind.rawValue.utf8.count))
                writer.write(utf8: key.kind.rawValue)
                writer.write(UInt32(key.account.utf8.count))
                writer.write(utf8: key.account)
                writer.write(UInt32(key.name.utf8.count))
                writer.write(utf8: key.name)
                writer.write(UInt32(item.value.count))
                item.value.withUnsafeBytes { writer.write($0) }
                writer.write(item.created.timeIntervalSinceReferenceDate.bitPattern)
                writer.write(item.expires == nil ? 0 : hasExpiry)
                writer.write(item.expires?.timeIntervalSinceReferenceDate.bitPattern ?? 0)
            }
            precondition(writer.offset == out.count, "vault table length miscounted")
        }
    }

    /// Decodes a table, strictly: any deviation from the format is an error.
    /// - Parameters:
    ///   - table: The plaintext.
    ///   - path: The vault's path, for the error message.
    /// - Returns: The items.
    /// - Throws: `.tampered` when the table is malformed.
    static func decode(_ table: SecretBytes, path: String) throws -> [ItemKey: StoredItem] {
        try VaultEntries(table: table, path: path).all
    }

    /// Decodes the entry where `cursor` stands and moves past it.
    /// - Returns: The entry, or nil when it is malformed.
    static func decodeEntry(_ cursor: inout ByteCursor) -> (ItemKey, StoredItem)? {
        guard let key = decodeKey(&cursor),
            let valueLength = cursor.uint32(), let value = cursor.take(Int(valueLength)),
            let created = date(cursor.uint64()),
            let flags = cursor.uint8(), flags & ~hasExpiry == 0,
            let expiresBits = cursor.uint64()
        else { return nil }
        var expires: Date?
        if flags == hasExpiry {
            guard let date = date(expiresBits) else { return nil }
            expires = date
        } else if expiresBits != 0 {
            return nil
        }
        return (key, StoredItem(value: SecretBytes(value), created: created, expires: expires))
    }

    /// Decodes the address (kind, account, name) of the entry where `cursor`
    /// stands and moves to its value's length.
    /// - Returns: The address, or nil when it is malformed.
    static func decodeKey(_ cursor: inout ByteCursor) -> ItemKey? {
        guard let kindLength = cursor.uint16(), (1...UInt16(maximumKindLength)).contains(kindLength),
            let kind = string(&cursor, length: Int(kindLength)),
            let accountLength = cursor.uint32(), let account = string(&cursor, length: Int(accountLength)),
            let nameLength = cursor.uint32(), let name = string(&cursor, length: Int(nameLength))
        else { return nil }
        return ItemKey(kind: ItemKey.Kind(rawValue: kind), account: account, name: name)
    }

    private static func string(_ cursor: inout ByteCursor, length: Int) -> String? {
        guard let bytes = cursor.take(length) else { return nil }
        return String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self)
    }

    static func date(_ bits: UInt64?) -> Date? {
        guard let bits else { return nil }
        let seconds = Double(bitPattern: bits)
        return seconds.isFinite ? Date(timeIntervalSinceReferenceDate: seconds) : nil
    }
}
