import Foundation
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

@testable import Latchkey

/// A store without atomic rewrites whose deletions start failing after a given
/// number, as a Secret Service daemon that dies part-way through a logout.
final class DyingStore: CredentialBackend {
    let inner = InMemoryBackend()
    private let deletionsLeft = Mutex<Int?>(nil)

    var kind: BackendKind { .memory }

    /// Lets `count` more deletions through, then fails every one until ``revive()``.
    func dies(afterDeleting count: Int) { deletionsLeft.withLock { $0 = count } }

    /// Lets every deletion through again.
    func revive() { deletionsLeft.withLock { $0 = nil } }

    func read(_ key: ItemKey) throws -> StoredItem? { try inner.read(key) }
    func write(_ item: StoredItem, for key: ItemKey) throws { try inner.write(item, for: key) }
    func list(kind: ItemKey.Kind?) throws -> [ItemKey] { try inner.list(kind: kind) }
    func deleteAll() throws { try inner.deleteAll() }

    func delete(_ key: ItemKey) throws {
        try deletionsLeft.withLock { left in
            guard let count = left else { return }
            guard count > 0 else { throw LatchkeyError(.unavailable, "the daemon died") }
            left = count - 1
        }
        try inner.delete(key)
    }
}

@Suite("A logout cut short in a store without atomic rewrites", .sandboxed)
struct InterruptedDeletionTests {
    @Test("the trail says what was being deleted before it goes, and the next run finishes it")
    func recordedAndFinished() throws {
        let store = DyingStore()
        let directory = try freshDirectory() + "/store"
        let vault = try Vault(
            appID: try AppID("com.example.cut"), policy: .default, backend: store, storeDirectory: directory)
        for index in 0..<6 { try vault.saveSession(SecretBytes(utf8: "t"), name: "s\(index)", account: "alice") }

        store.dies(afterDeleting: 2)
        #expect(throws: LatchkeyError.self) { try vault.logout(account: "alice") }
        let started = try #require(
            try vault.auditEntries().first { $0.event == AuditEvent(rawValue: "logout.started") })
        #expect(
            started.detail == "deleting: wiped 6 sessions (s0, s1, s2, s3, s4, s5); no username was remembered",
            "\(started.detail ?? "")")
        #expect(try store.list(kind: .session).count == 4, "cut short after two deletions")
        #expect(
            FileManager.default.fileExists(atPath: vault.pendingDeletionMarkerPath),
            "the marker stands while the list does")

        store.revive()
        let next = try Vault(appID: vault.appID, policy: .default, backend: store, storeDirectory: directory)
        try next.finishInterruptedDeletions()
        #expect(try store.list(kind: .session).isEmpty)
        #expect(try store.read(Vault.pendingDeletionItem) == nil)
        let finished = try #require(try next.auditEntries().last)
        #expect(
            finished.event == .logout
                && finished.detail?.hasPrefix("finished an interrupted logout: wiped 4 sessions") == true,
            "\(finished.detail ?? "")")
        #expect(try next.verifyAudit().allSatisfy { $0.verification.isIntact })
        #expect(!FileManager.default.fileExists(atPath: next.pendingDeletionMarkerPath))
        try next.finishInterruptedDeletions()
        #expect(try next.auditEntries().last?.sequence == finished.sequence, "nothing is left to finish")
    }

    @Test("a complete logout leaves no marker, and without one an open does not ask the store for a list")
    func markerGatesTheCheck() throws {
        let store = DyingStore()
        let directory = try freshDirectory() + "/store"
        let vault = try Vault(
            appID: try AppID("com.example.marker"), policy: .default, backend: store, storeDirectory: directory)
        try vault.saveSession(SecretBytes(utf8: "t"), name: "s", account: "alice")
        try vault.logout(account: "alice")
        #expect(!FileManager.default.fileExists(atPath: vault.pendingDeletionMarkerPath))
        // A list with no marker (not one this machine wrote) is left alone by an open.
        try store.write(StoredItem(value: SecretBytes()), for: Vault.pendingDeletionItem)
        try vault.finishInterruptedDeletions()
        #expect(try store.read(Vault.pendingDeletionItem) != nil)
    }
}
