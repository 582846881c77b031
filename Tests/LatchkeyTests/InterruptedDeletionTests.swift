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
            appID: try AppID("com.example.cut"), policy: .default, storeDirectory: directory, store: store)
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
        let next = try Vault(appID: vault.appID, policy: .default, storeDirectory: directory, store: store)
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
            appID: try AppID("com.example.marker"), policy: .default, storeDirectory: directory, store: store)
        try vault.saveSession(SecretBytes(utf8: "t"), name: "s", account: "alice")
        try vault.logout(account: "alice")
        #expect(!FileManager.default.fileExists(atPath: vault.pendingDeletionMarkerPath))
        // A list with no marker (not one this machine wrote) is left alone by an open.
        try store.write(StoredItem(value: SecretBytes()), for: Vault.pendingDeletionItem)
        try vault.finishInterruptedDeletions()
        #expect(try store.read(Vault.pendingDeletionItem) != nil)
    }
}

@Suite("A list of an interrupted deletion written by another client of the real keyring", .sandboxed)
struct CraftedDeletionListTests {
    /// A list as any client of the keyring could store it: `event` and `targets` in the entry table.
    static func craftedList(event: String, targets: [ItemKey]) -> StoredItem {
        var entries = Dictionary(uniqueKeysWithValues: targets.map { ($0, StoredItem(value: SecretBytes())) })
        entries[Vault.pendingEventEntry] = StoredItem(value: SecretBytes(utf8: event))
        return StoredItem(value: VaultTable.encode(entries))
    }

    static let trailKey = ItemKey(kind: .key, name: "audit.secret-service")

    /// A vault of `backend` in `directory` holding a session and alice as the remembered username.
    static func vaultWithCredentials(_ backend: SecretServiceBackend, in directory: String) throws -> Vault {
        let vault = try Vault(appID: backend.appID, policy: .default, storeDirectory: directory, store: backend)
        try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        _ = try vault.rememberUsername("alice")
        return vault
    }

    /// Stores `list` as any client of the keyring could, with the marker a cut-short run leaves,
    /// and returns a new vault of the namespace, as the next command opens it.
    static func plant(_ list: StoredItem, beside vault: Vault, in backend: SecretServiceBackend) throws -> Vault {
        try backend.write(list, for: Vault.pendingDeletionItem)
        try PrivateFiles.replace(vault.pendingDeletionMarkerPath, with: Array("logout\n".utf8))
        return try Vault(
            appID: backend.appID, policy: .default, storeDirectory: vault.storeDirectory!, store: backend)
    }

    @Test(
        "a list naming another event or other items than sessions and the username is tampered, and nothing goes",
        arguments: [
            ("audit.reset", [Vault.rememberSetting, ItemKey(kind: .session, name: "access")]),
            ("wipe", [CraftedDeletionListTests.trailKey]),
            ("logout", [Vault.rememberSetting, Vault.usernameItem]),
            ("logout", [ItemKey(kind: .username, name: "other")]),
        ])
    func craftedListRefused(event: String, targets: [ItemKey]) async throws {
        // Made here: the sandbox belongs to the test's task, not to the thread the store is used on.
        let directory = try freshDirectory("crafted") + "/store"
        try await SecretServiceTestSupport.withBackend("crafted") { backend in
            try await SecretServiceTestSupport.onOwnThread {
                let vault = try Self.vaultWithCredentials(backend, in: directory)
                try vault.setUsernameMemoryAllowed(false)
                let before = try backend.list(kind: nil).sorted { "\($0)" < "\($1)" }
                #expect(before.contains(Self.trailKey) && before.contains(Vault.rememberSetting))

                let next = try Self.plant(Self.craftedList(event: event, targets: targets), beside: vault, in: backend)
                let error = #expect(throws: LatchkeyError.self) { try next.finishInterruptedDeletions() }
                #expect(error?.code == .tampered, "\(String(describing: error))")

                let after = try backend.list(kind: nil).sorted { "\($0)" < "\($1)" }
                #expect(after.filter { $0 != Vault.pendingDeletionItem } == before, "nothing was deleted")
                #expect(try next.isUsernameMemoryAllowed() == false, "the opt-out stands")
                let entries = try next.auditEntries()
                #expect(!entries.contains { $0.event == .auditReset }, "no reset was recorded")
                #expect(entries.last?.event == .tamperDetected, "\(entries.last?.event.rawValue ?? "")")
                #expect(try next.verifyAudit().allSatisfy { $0.verification.isIntact })
            }
        }
    }

    @Test("a list Latchkey writes is finished, and the entry names both kinds of item it removed")
    func ownListFinished() async throws {
        // Made here: the sandbox belongs to the test's task, not to the thread the store is used on.
        let directory = try freshDirectory("ownlist") + "/store"
        try await SecretServiceTestSupport.withBackend("ownlist") { backend in
            try await SecretServiceTestSupport.onOwnThread {
                let vault = try Self.vaultWithCredentials(backend, in: directory)
                let list = Self.craftedList(
                    event: "wipe",
                    targets: [ItemKey(kind: .session, account: "alice", name: "access"), Vault.usernameItem])
                let next = try Self.plant(list, beside: vault, in: backend)
                try next.finishInterruptedDeletions()
                let last = try #require(try next.auditEntries().last)
                #expect(last.event == .wipe)
                #expect(
                    last.detail == "finished an interrupted wipe: wiped 1 session (access); forgot the username",
                    "\(last.detail ?? "")")
                #expect(try backend.list(kind: .session).isEmpty && backend.read(Vault.usernameItem) == nil)
            }
        }
    }
}
