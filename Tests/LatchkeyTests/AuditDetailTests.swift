import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Long audit details", .sandboxed)
struct AuditDetailTests {
    @Test(
        "a logout whose report names many sessions is audited, the detail shortened with its counts first",
        arguments: TestedStore.allCases)
    func longLogoutDetail(store: TestedStore) throws {
        let vault = try store.open()
        for index in 0..<14 {
            try vault.saveSession(
                SecretBytes(utf8: "t"), name: "git:https://host-\(index).example.com/team/a-long-repository-path.git",
                account: "alice")
        }
        let report = try vault.logout(account: "alice")
        #expect(report.wipedSessions.count == 14)
        let entry = try #require(try vault.auditEntries().last)
        #expect(entry.event == .logout && entry.outcome == .ok)
        let detail = try #require(entry.detail)
        #expect(detail.hasPrefix("wiped 14 sessions") && detail.contains("… [truncated: "), "\(detail)")
        #expect(detail.utf8.count <= AuditEntry.maximumDetailLength)
        #expect(try vault.verifyAudit().allSatisfy { $0.verification.isIntact })
    }

    @Test("names and accounts up to 255 bytes are saved and audited; longer ones are refused, saying the limit")
    func nameLimit() throws {
        let vault = try TestedStore.keyFile.open()
        let longest = String(repeating: "n", count: ItemKey.maximumNameLength)
        try vault.saveSession(SecretBytes(utf8: "t"), name: longest, account: String(repeating: "a", count: 255))
        #expect(try vault.auditEntries().last?.detail == longest)
        #expect(try vault.deleteSession(named: longest, account: String(repeating: "a", count: 255)))
        #expect(try vault.auditEntries().last?.event == .sessionDeleted)

        let name = #expect(throws: LatchkeyError.self) {
            try vault.saveSession(SecretBytes(utf8: "t"), name: longest + "n", account: "")
        }
        #expect(name?.code == .invalidInput && name?.message.contains("256 bytes long; the most is 255") == true)
        let account = String(repeating: "é", count: 200)
        let error = #expect(throws: LatchkeyError.self) {
            try vault.saveSession(SecretBytes(utf8: "t"), name: "s", account: account)
        }
        #expect(error?.code == .invalidInput && error?.message.contains("account is 400 bytes long") == true)
        #expect(error?.message.contains("éé") == false, "the account is never quoted")
        #expect(try vault.sessions().isEmpty)
    }
}
