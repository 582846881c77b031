import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Vault entry table, decoded entry by entry", .sandboxed)
struct VaultEntriesTests {
    /// Items of several kinds, with ASCII and non-ASCII accounts and names, with and without expiry.
    static let items: [ItemKey: StoredItem] = {
        var items: [ItemKey: StoredItem] = [:]
        let created = Date(timeIntervalSinceReferenceDate: 800_000_000)
        for number in 0..<50 {
            items[ItemKey(kind: .session, account: "user-\(number)", name: "git:https://host-\(number).example")] =
                StoredItem(
                    value: SecretBytes(utf8: "password-\(number)"), created: created.addingTimeInterval(Double(number)))
        }
        items[ItemKey(kind: .session, account: "", name: "git-index:https://host-1.example")] =
            StoredItem(value: SecretBytes(utf8: "{}"), created: created, expires: created.addingTimeInterval(60))
        items[ItemKey(kind: .session, account: "José", name: "accès")] = StoredItem(
            value: SecretBytes(utf8: "é"), created: created)
        items[ItemKey(kind: .username, name: "last")] = StoredItem(value: SecretBytes(utf8: "alice"), created: created)
        items[ItemKey(kind: .key, name: "pseudonyms")] = StoredItem(
            value: SecretBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 7) }, created: created)
        return items
    }()

    @Test("every item is found by its key, alone, as the full decode finds it; absent keys are nil")
    func lookUp() throws {
        let entries = try VaultEntries(table: VaultTable.encode(Self.items), path: "test")
        for (key, item) in Self.items {
            #expect(entries.item(for: key) == item)
        }
        #expect(entries.all == Self.items)
        // The same account typed decomposed (e + U+0301) is the same item, as in every store.
        #expect(
            entries.item(for: ItemKey(kind: .session, account: "Jose\u{301}", name: "acce\u{300}s"))?.value
                == SecretBytes(utf8: "é"))
        #expect(
            entries.item(for: ItemKey(kind: .session, account: "user-1", name: "git:https://host-2.example")) == nil)
        #expect(
            entries.item(for: ItemKey(kind: .username, account: "user-1", name: "git:https://host-1.example")) == nil)
        #expect(entries.item(for: ItemKey(kind: .session, account: "user-1", name: "git:https://host-1.exampl")) == nil)
    }

    @Test("keys are listed by kind without decoding values")
    func keys() throws {
        let entries = try VaultEntries(table: VaultTable.encode(Self.items), path: "test")
        #expect(Set(entries.keys(kind: nil)) == Set(Self.items.keys))
        #expect(Set(entries.keys(kind: .session)) == Set(Self.items.keys.filter { $0.kind == .session }))
        #expect(entries.keys(kind: .username) == [ItemKey(kind: .username, name: "last")])
    }

    @Test("two entries with one address are refused, byte for byte or after NFC")
    func duplicates() throws {
        let one = StoredItem(value: SecretBytes(utf8: "a"), created: Date(timeIntervalSinceReferenceDate: 0))
        // Encoded one at a time (each table holds one entry), then joined under one count.
        func table(_ entries: [(kind: String, account: String, name: String)]) -> SecretBytes {
            var body: [UInt8] = []
            for entry in entries {
                let single = VaultTable.encode([ItemKey(kind: .session, name: "x"): one]).withUnsafeBytes { Array($0) }
                // Rewrite the address with raw (unnormalised) text: lengths then bytes.
                var bytes: [UInt8] = []
                withUnsafeBytes(of: UInt16(entry.kind.utf8.count).littleEndian) { bytes += $0 }
                bytes += entry.kind.utf8
                withUnsafeBytes(of: UInt32(entry.account.utf8.count).littleEndian) { bytes += $0 }
                bytes += entry.account.utf8
                withUnsafeBytes(of: UInt32(entry.name.utf8.count).littleEndian) { bytes += $0 }
                bytes += entry.name.utf8
                let addressEnd = 4 + 2 + "session".utf8.count + 4 + 0 + 4 + 1
                body += bytes + single[addressEnd...]
            }
            var count: [UInt8] = []
            withUnsafeBytes(of: UInt32(entries.count).littleEndian) { count += $0 }
            return SecretBytes(count + body)
        }
        let distinct = try VaultEntries(
            table: table([("session", "a", "x"), ("session", "b", "x"), ("username", "a", "x")]), path: "t")
        #expect(distinct.keys(kind: nil).count == 3)
        #expect(throws: LatchkeyError(.tampered, "")) {
            try VaultEntries(
                table: table([("session", "a", "x"), ("session", "b", "x"), ("session", "a", "x")]), path: "t")
        }
        #expect(throws: LatchkeyError(.tampered, "")) {
            try VaultEntries(table: table([("session", "Jos\u{E9}", "x"), ("session", "Jose\u{301}", "x")]), path: "t")
        }
        #expect(throws: LatchkeyError(.tampered, "")) {
            try VaultTable.decode(table([("session", "a", "acc\u{E8}s"), ("session", "a", "acce\u{300}s")]), path: "t")
        }
    }

    @Test("a malformed table is refused as a whole, before any entry is asked for")
    func malformed() throws {
        let good = VaultTable.encode(Self.items).withUnsafeBytes { Array($0) }
        // Cut short, one byte more, and an invalid UTF-8 byte in the first entry's kind.
        var badUTF8 = good
        badUTF8[6] = 0xFF
        for bytes in [Array(good.dropLast()), good + [0], badUTF8] {
            #expect(throws: LatchkeyError(.tampered, "")) { try VaultEntries(table: SecretBytes(bytes), path: "t") }
        }
    }
}
