import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyProvider

/// The provider's store without a bus: its items in the journal beside the vault, what a crash
/// leaves, and the compaction.
@Suite("the Secret Service provider's store", .sandboxed)
struct ProviderStoreTests {
    private let caller = Caller(credentials: nil)

    private func vaultPath(_ directory: String) -> String {
        directory + "/io.github.latchkey.secret-service.d/credentials.vault"
    }

    private func journalPath(_ directory: String) -> String {
        directory + "/io.github.latchkey.secret-service.d/secret-service.journal"
    }

    /// Stores `value` under the attribute `key` in the login collection, replacing the item there.
    @discardableResult
    private func put(_ store: ProviderStore, _ key: String, _ value: String) throws -> ItemRef {
        try store.createItem(
            in: "login", label: "label " + key, attributes: ["key": key], secret: SecretBytes(utf8: value),
            contentType: "text/plain", replace: true, for: caller
        ).ref
    }

    /// The secret of the item with attribute `key`, nil when there is none.
    private func value(_ store: ProviderStore, _ key: String) throws -> String? {
        let found = store.search(["key": key])
        #expect(found.count <= 1)
        guard let ref = found.first, let secret = try store.secret(ref, for: caller) else { return nil }
        return String(decoding: secret.copyBytes(), as: UTF8.self)
    }

    @Test("writes, changes and deletions do not rewrite the vault file, and a new store reads them all back")
    func itemsOutsideTheVault() throws {
        let directory = try freshDirectory("store")
        let store = try ProviderStore(storeDirectory: directory)
        let before = try #require(try POSIX.status(of: vaultPath(directory)))
        for number in 0..<40 { try put(store, "k\(number)", "v\(number)") }
        try put(store, "k3", "changed")
        let renamed = try #require(store.search(["key": "k4"]).first)
        try store.update(renamed, label: "renamed", attributes: ["key": "k4", "extra": "x"], for: caller)
        try store.delete(try #require(store.search(["key": "k5"]).first), for: caller)
        let after = try #require(try POSIX.status(of: vaultPath(directory)))
        #expect(after.inode == before.inode && after.size == before.size, "the vault file was not replaced")

        let reopened = try ProviderStore(storeDirectory: directory)
        #expect(reopened.search([:]).count == 39)
        #expect(try value(reopened, "k0") == "v0")
        #expect(try value(reopened, "k39") == "v39")
        #expect(try value(reopened, "k3") == "changed")
        #expect(try value(reopened, "k4") == "v4", "a label or attribute change keeps the secret")
        #expect(reopened.search(["extra": "x"]).first.flatMap { reopened.info($0)?.label } == "renamed")
        #expect(try value(reopened, "k5") == nil, "a deletion is not undone")
        let text = try String(contentsOfFile: journalPath(directory), encoding: .isoLatin1)
        #expect(!text.contains("v39") && !text.contains("label k1"), "the journal holds no plaintext")
    }

    @Test("a record a crash cut short at the journal's end is cut off; every acknowledged change stays")
    func tornTail() throws {
        let directory = try freshDirectory("store")
        let store = try ProviderStore(storeDirectory: directory)
        for number in 0..<5 { try put(store, "k\(number)", "v\(number)") }
        try store.delete(try #require(store.search(["key": "k2"]).first), for: caller)
        let handle = try #require(FileHandle(forWritingAtPath: journalPath(directory)))
        handle.seekToEndOfFile()
        handle.write(Data([0, 0, 0, 200] + [UInt8](repeating: 7, count: 50)))
        try handle.close()

        let reopened = try ProviderStore(storeDirectory: directory)
        #expect(try (0..<5).map { try value(reopened, "k\($0)") } == ["v0", "v1", nil, "v3", "v4"])
        try put(reopened, "k5", "v5")
        let again = try ProviderStore(storeDirectory: directory)
        #expect(try value(again, "k5") == "v5")
        #expect(try value(again, "k4") == "v4")
    }

    @Test("a record changed before the journal's last is refused as tampered")
    func tamperedRecord() throws {
        let directory = try freshDirectory("store")
        let store = try ProviderStore(storeDirectory: directory)
        for number in 0..<3 { try put(store, "k\(number)", "v\(number)") }
        var bytes = try #require(FileManager.default.contents(atPath: journalPath(directory)))
        bytes[40] ^= 1 // inside the first record
        try bytes.write(to: URL(fileURLWithPath: journalPath(directory)))
        #expect {
            _ = try ProviderStore(storeDirectory: directory)
        } throws: { ($0 as? LatchkeyError)?.code == .tampered }
    }

    @Test(
        "compaction keeps the live items, resurrects no deleted one, and a crash before its rename leaves the old journal"
    )
    func compaction() throws {
        let directory = try freshDirectory("store")
        let store = try ProviderStore(storeDirectory: directory, compactionMinimum: 8)
        for round in 0..<10 {
            for number in 0..<4 { try put(store, "k\(number)", "v\(number)-\(round)") }
        }
        try store.delete(try #require(store.search(["key": "k1"]).first), for: caller)
        let length = try #require(try POSIX.status(of: journalPath(directory))).size
        let reopened = try ProviderStore(storeDirectory: directory, compactionMinimum: 8)
        #expect(try (0..<4).map { try value(reopened, "k\($0)") } == ["v0-9", nil, "v2-9", "v3-9"])
        // The same 41 changes without a compaction: a journal at least twice as long.
        let uncompacted = try freshDirectory("uncompacted")
        let whole = try ProviderStore(storeDirectory: uncompacted, compactionMinimum: 1000)
        for round in 0..<10 {
            for number in 0..<4 { try put(whole, "k\(number)", "v\(number)-\(round)") }
        }
        try whole.delete(try #require(whole.search(["key": "k1"]).first), for: caller)
        let wholeLength = try #require(try POSIX.status(of: journalPath(uncompacted))).size
        #expect(length * 2 < wholeLength, "the journal was compacted: \(length) bytes, \(wholeLength) without")

        // Deletions among the writes: some compactions (at rounds 3 and 8) follow a deletion.
        let mixed = try freshDirectory("mixed")
        let deleting = try ProviderStore(storeDirectory: mixed, compactionMinimum: 8)
        for round in 0..<10 {
            for number in 0..<4 { try put(deleting, "k\(number)", "v\(number)-\(round)") }
            try deleting.delete(try #require(deleting.search(["key": "k\(round % 4)"]).first), for: caller)
        }
        let reread = try ProviderStore(storeDirectory: mixed, compactionMinimum: 8)
        #expect(try (0..<4).map { try value(reread, "k\($0)") } == ["v0-9", nil, "v2-9", "v3-9"])
        #expect(reread.search([:]).count == 3, "no deleted item is back")

        // A compaction a crash stopped before its rename left its temporary file beside the journal.
        let leftover =
            directory + "/io.github.latchkey.secret-service.d/.latchkey-tmp-secret-service.journal.0123456789abcdef"
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: leftover))
        let afterCrash = try ProviderStore(storeDirectory: directory, compactionMinimum: 8)
        #expect(try (0..<4).map { try value(afterCrash, "k\($0)") } == ["v0-9", nil, "v2-9", "v3-9"])
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }
}
