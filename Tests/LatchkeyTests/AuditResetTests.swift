import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Audit reset", .sandboxed)
struct AuditResetTests {
    /// Ways a trail breaks, each done to a vault with a few entries.
    enum Damage: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case anchorFileDeleted, tailCut, keyItemDeleted
        var testDescription: String { rawValue }
    }

    @Test(
        "after each kind of damage, operations fail with 65 naming Vault.resetAuditTrail() and no command line; a reset keeps the old trail, starts a new chain, and the namespace works again",
        arguments: [TestedStore.keyFile, .secretService], Damage.allCases)
    func resetAfterDamage(store: TestedStore, damage: Damage) throws {
        let vault = try store.open()
        for name in ["a", "b", "c"] { try vault.saveSession(SecretBytes(utf8: name), name: name, account: "alice") }
        let trail = try #require(vault.auditTrail)
        let highest = try #require(try trail.entries().last?.sequence)
        switch damage {
        case .anchorFileDeleted:
            try POSIX.removeFile(trail.anchorFile.path)
        case .tailCut:
            var lines = try fileBytes(trail.path).split(separator: 10)
            lines.removeLast(2)
            try overwrite(trail.path, with: Array(lines.joined(separator: [10])) + [10])
        case .keyItemDeleted:
            try trail.backend.delete(trail.keyItem)
        }
        // What another process, with nothing read yet, meets.
        let next = try store.reopen(vault)
        let refused = #expect(throws: LatchkeyError.self) {
            try next.saveSession(SecretBytes(utf8: "d"), name: "d", account: "alice")
        }
        #expect(
            refused?.code == .tampered && refused?.message.contains("Vault.resetAuditTrail()") == true,
            "\(refused?.message ?? "")")
        #expect(
            try next.backend.read(ItemKey(kind: .session, account: "alice", name: "d")) == nil, "nothing was changed")
        let read = #expect(throws: LatchkeyError.self) { try next.session(named: "a", account: "alice") }
        #expect(read?.code == .tampered, "an unauditable read is refused too")

        let reports = try next.resetAuditTrail()
        let report = try #require(reports.first)
        #expect(reports.count == 1 && report.trailPath == trail.path)
        let kept = try #require(report.keptSegment)
        #expect(try POSIX.status(of: kept) != nil, "the old trail is kept")
        #expect(report.lastVerifiedSequence < 4)
        let first = try #require(try next.auditEntries().first { $0.event == .auditReset })
        // Numbering goes on: no sequence number is used twice, whatever the damage took.
        #expect(first.sequence == highest + 1, "seq \(first.sequence) after \(highest)")
        #expect(first.detail?.contains(PrivateFiles.baseName(of: kept)) == true)
        try next.saveSession(SecretBytes(utf8: "d"), name: "d", account: "alice")
        #expect(try next.session(named: "d", account: "alice")?.value == SecretBytes(utf8: "d"))
        #expect(try next.verifyAudit().allSatisfy { $0.verification.isIntact })
        #expect(try next.resetAuditTrail().isEmpty, "an intact trail is left alone")
        try next.wipe()
        if store == .secretService { try SecretServiceBackend(appID: next.appID).deleteAll() }
    }
}
