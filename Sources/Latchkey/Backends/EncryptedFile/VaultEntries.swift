#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The items of one vault save: either the decrypted entry table, checked
/// whole when it was opened but decoded one entry at a time when asked for,
/// or the items a save has just written.
///
/// So a process that reads one item of a large vault (a git `get` among a
/// thousand stored credentials) does not build a string, a key and a secret
/// for every entry: opening checks each entry's form, UTF-8 and uniqueness
/// in place, and ``item(for:)`` decodes only the entry it finds.
struct VaultEntries {
    private enum Storage {
        /// The plaintext table and where each entry starts.
        case table(SecretBytes, [Span])
        /// Items kept as they are (after a save).
        case items([ItemKey: StoredItem])
    }

    /// Where one entry of the table is, and the bytes that name it.
    private struct Span {
        /// The offset of its kind-length field.
        var start: Int
        /// The offset just after its name: `start..<nameEnd` is the entry's
        /// address as stored (kind, account and name with their lengths).
        var nameEnd: Int
        /// The address in the same form after Unicode NFC normalisation, for
        /// an entry whose account or name is not ASCII (nil for ASCII, which
        /// is in NFC already).
        var normalized: [UInt8]?
    }

    private let storage: Storage

    /// The items `items`, as a save wrote them.
    init(_ items: [ItemKey: StoredItem]) {
        storage = .items(items)
    }

    /// Opens a plaintext entry table, strictly: any deviation from the format
    /// (`docs/FILE-FORMAT.md`, "Entry table") or two entries with one address
    /// is an error, as when every entry is decoded.
    /// - Parameters:
    ///   - table: The plaintext.
    ///   - path: The vault's path, for the error message.
    /// - Throws: `.tampered` when the table is malformed.
    init(table: SecretBytes, path: String) throws {
        let spans = table.withUnsafeBytes { raw -> [Span]? in
            var cursor = ByteCursor(raw)
            guard let count = cursor.uint32(), Int(count) <= cursor.remaining / VaultTable.fixedEntryLength else {
                return nil
            }
            var spans: [Span] = []
            spans.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let span = Self.check(&cursor, in: raw) else { return nil }
                spans.append(span)
            }
            guard cursor.remaining == 0, Self.areDistinct(spans, in: raw) else { return nil }
            return spans
        }
        guard let spans else {
            throw LatchkeyError(.tampered, "\(path) holds a malformed entry table")
        }
        storage = .table(table, spans)
    }

    /// The item at `key`, decoding only that entry.
    func item(for key: ItemKey) -> StoredItem? {
        switch storage {
        case .items(let items):
            return items[key]
        case .table(let table, let spans):
            let wanted = Self.address(key)
            return table.withUnsafeBytes { raw in
                wanted.withUnsafeBytes { wanted in
                    guard
                        let span = spans.first(where: { Self.withAddress(of: $0, in: raw) { $0.elementsEqual(wanted) } }
                        )
                    else { return nil }
                    var cursor = ByteCursor(raw, at: span.start)
                    return VaultTable.decodeEntry(&cursor)?.1
                }
            }
        }
    }

    /// The addresses of the items, of one kind or of all; values are not decoded.
    func keys(kind: ItemKey.Kind?) -> [ItemKey] {
        switch storage {
        case .items(let items):
            return kind.map { kind in items.keys.filter { $0.kind == kind } } ?? Array(items.keys)
        case .table(let table, let spans):
            return table.withUnsafeBytes { raw in
                spans.compactMap { span in
                    var cursor = ByteCursor(raw, at: span.start)
                    guard let key = VaultTable.decodeKey(&cursor), kind.map({ key.kind == $0 }) ?? true else {
                        return nil
                    }
                    return key
                }
            }
        }
    }

    /// Every item, decoded.
    var all: [ItemKey: StoredItem] {
        switch storage {
        case .items(let items):
            return items
        case .table(let table, let spans):
            return table.withUnsafeBytes { raw in
                var items: [ItemKey: StoredItem] = [:]
                items.reserveCapacity(spans.count)
                for span in spans {
                    var cursor = ByteCursor(raw, at: span.start)
                    // Checked when the table was opened.
                    guard let (key, item) = VaultTable.decodeEntry(&cursor) else {
                        preconditionFailure("a checked vault entry no longer decodes")
                    }
                    items[key] = item
                }
                return items
            }
        }
    }

    // MARK: Checking the table

    /// Checks one entry where `cursor` stands, as ``VaultTable/decodeEntry(_:)``
    /// would decode it, without building it; moves past it.
    private static func check(_ cursor: inout ByteCursor, in raw: UnsafeRawBufferPointer) -> Span? {
        let start = cursor.offset
        guard let kindLength = cursor.uint16(), (1...UInt16(VaultTable.maximumKindLength)).contains(kindLength),
            let kind = cursor.take(Int(kindLength)), isUTF8(kind),
            let accountLength = cursor.uint32(), let account = cursor.take(Int(accountLength)), isUTF8(account),
            let nameLength = cursor.uint32(), let name = cursor.take(Int(nameLength)), isUTF8(name)
        else { return nil }
        let nameEnd = cursor.offset
        guard let valueLength = cursor.uint32(), cursor.take(Int(valueLength)) != nil,
            VaultTable.date(cursor.uint64()) != nil,
            let flags = cursor.uint8(), flags & ~VaultTable.hasExpiry == 0,
            let expiresBits = cursor.uint64()
        else { return nil }
        if flags == VaultTable.hasExpiry {
            guard VaultTable.date(expiresBits) != nil else { return nil }
        } else if expiresBits != 0 {
            return nil
        }
        var span = Span(start: start, nameEnd: nameEnd, normalized: nil)
        if !(isASCII(account) && isASCII(name)) {
            var again = ByteCursor(raw, at: start)
            guard let key = VaultTable.decodeKey(&again) else { return nil }
            span.normalized = address(key)
        }
        return span
    }

    /// Whether no two entries have the same address (after NFC, as ``ItemKey`` compares them).
    private static func areDistinct(_ spans: [Span], in raw: UnsafeRawBufferPointer) -> Bool {
        var first: [Int: Int] = [:] // address hash: the first entry with it
        first.reserveCapacity(spans.count)
        for (index, span) in spans.enumerated() {
            let hash = withAddress(of: span, in: raw) { bytes in
                var hasher = Hasher()
                hasher.combine(bytes: bytes)
                return hasher.finalize()
            }
            guard let earlier = first.updateValue(index, forKey: hash) else { continue }
            let equal = withAddress(of: span, in: raw) { a in
                withAddress(of: spans[earlier], in: raw) { b in a.elementsEqual(b) }
            }
            if equal { return false }
            // Two addresses with one hash (the hash is seeded per process): compare them all.
            return Set(spans.map { withAddress(of: $0, in: raw) { Array($0) } }).count == spans.count
        }
        return true
    }

    /// Runs `body` with an entry's address bytes: its normalised form, or the table's own bytes.
    private static func withAddress<Result>(
        of span: Span, in raw: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        if let normalized = span.normalized { return normalized.withUnsafeBytes(body) }
        return body(UnsafeRawBufferPointer(rebasing: raw[span.start..<span.nameEnd]))
    }

    /// `key`'s address as the table stores it: kind, account and name, each after its length.
    private static func address(_ key: ItemKey) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(10 + key.kind.rawValue.utf8.count + key.account.utf8.count + key.name.utf8.count)
        withUnsafeBytes(of: UInt16(key.kind.rawValue.utf8.count).littleEndian) { bytes += $0 }
        bytes += key.kind.rawValue.utf8
        withUnsafeBytes(of: UInt32(key.account.utf8.count).littleEndian) { bytes += $0 }
        bytes += key.account.utf8
        withUnsafeBytes(of: UInt32(key.name.utf8.count).littleEndian) { bytes += $0 }
        bytes += key.name.utf8
        return bytes
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 < 0x80 }
    }

    private static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        isASCII(bytes) || String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) != nil
    }
}
