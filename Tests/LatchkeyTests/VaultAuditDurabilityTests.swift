import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// ``Vault/AuditDurability``: a long-lived process may have its audit entries made
/// durable once it has answered (``Vault/settleAudit()``).
@Suite("Deferred audit durability", .sandboxed)
struct VaultAuditDurabilityTests {
    /// The sequence number the anchor of the trail of the store in use names.
    private func anchored(_ vault: Vault) throws -> UInt64? {
        let trail = try #require(vault.auditTrail)
        return try trail.readAnchor(key: #require(try trail.storedKey())).value?.sequence
    }

    /// The last entry's sequence number in the trail of the store in use.
    private func last(_ vault: Vault) throws -> UInt64? {
        try #require(vault.auditTrail).entries().last?.sequence
    }

    @Test(
        "a deferred entry is readable at once and one past its anchor; settleAudit makes it durable and anchors it",
        arguments: [TestedStore.keyFile, .secretService])
    func deferredThenSettled(store: TestedStore) throws {
        let vault = try store.open()
        #expect(vault.auditDurability == .immediate)
        try vault.saveSession(SecretBytes(utf8: "one"), name: "access", account: "alice")
        #expect(try anchored(vault) == last(vault), "immediate: anchored before the operation returns")

        vault.auditDurability = .deferred
        #expect(vault.auditDurability == .deferred)
        try vault.saveSession(SecretBytes(utf8: "two"), name: "access", account: "alice")
        let written = try #require(try last(vault))
        #expect(try anchored(vault) == written - 1, "the anchor waits for settleAudit")
        // Every reader sees the entry at once, and accepts the trail.
        let reader = try store.reopen(vault)
        #expect(try reader.auditEntries().contains { $0.sequence == written && $0.event == .sessionSaved })
        #expect(try reader.verifyAudit().allSatisfy { $0.verification.isIntact })

        #expect(vault.settleAudit().isEmpty)
        #expect(try anchored(vault) == written)
        #expect(vault.settleAudit().isEmpty, "nothing is left to settle")
        #expect(try anchored(vault) == written)

        // Several operations before one settle: the trail is never more than one past its anchor.
        try vault.saveSecret(SecretBytes(utf8: "k"), named: "api")
        _ = try vault.secret(named: "api")
        let latest = try #require(try last(vault))
        #expect(try anchored(vault) == latest - 1)
        #expect(vault.settleAudit().isEmpty)
        #expect(try anchored(vault) == latest)
    }

    @Test("the async settleAudit settles what the async operations deferred")
    func asyncSettle() async throws {
        let vault = try TestedStore.keyFile.open()
        vault.auditDurability = .deferred
        try await vault.saveSession(SecretBytes(utf8: "one"), name: "access", account: "alice")
        let written = try #require(try last(vault))
        #expect(try anchored(vault) == written - 1)
        #expect(await vault.settleAudit().isEmpty)
        #expect(try anchored(vault) == written)
    }

    @Test(
        "a process killed before it settles leaves its entries written, a trail every reader accepts, and the next append anchors them",
        arguments: [TestedStore.keyFile, .secretService])
    func killedBeforeSettle(store: TestedStore) throws {
        let dying = try store.open()
        dying.auditDurability = .deferred
        try dying.saveSession(SecretBytes(utf8: "one"), name: "access", account: "alice")
        let written = try #require(try last(dying))
        // The process ends here: its vault is never settled.
        let next = try store.reopen(dying)
        #expect(try next.auditEntries().contains { $0.sequence == written })
        #expect(try next.verifyAudit().allSatisfy { $0.verification.isIntact })
        try next.saveSession(SecretBytes(utf8: "two"), name: "access", account: "alice")
        #expect(try anchored(next) == last(next))
        #expect(try last(next) == written + 1)
        #expect(try next.verifyAudit().allSatisfy { $0.verification.isIntact })
        #expect(dying.settleAudit().isEmpty, "a late settle finds the entry anchored already and moves nothing back")
        #expect(try anchored(next) == written + 1)
    }
}
