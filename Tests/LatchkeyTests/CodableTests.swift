import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Codable value types", .sandboxed)
struct CodableTests {
    private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    @Test("an app id encodes as its text, and text that is not an app id is refused on decoding")
    func appID() throws {
        let id = try AppID("com.example.notes")
        #expect(String(decoding: try JSONEncoder().encode(id), as: UTF8.self) == "\"com.example.notes\"")
        #expect(try roundTrip(id) == id)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AppID.self, from: Data("\"../etc\"".utf8)) }
    }

    @Test("an item key round-trips and its account and name are NFC after decoding, as after init")
    func itemKey() throws {
        let json = Data(#"{"kind":"session","account":"jose\u0301","name":"access"}"#.utf8)
        let decoded = try JSONDecoder().decode(ItemKey.self, from: json)
        #expect(decoded == ItemKey(kind: .session, account: "jos\u{e9}", name: "access"))
        #expect(try roundTrip(decoded) == decoded)
    }

    @Test("what a vault reports (sessions, logout, audit entries and verdicts) round-trips through JSON")
    func reports() throws {
        let vault = try TestedStore.keyFile.open()
        try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        let sessions = try vault.sessions()
        #expect(try roundTrip(sessions) == sessions)
        let logout = try vault.logout(account: "alice")
        #expect(try roundTrip(logout) == logout)
        let entries = try vault.auditEntries()
        #expect(!entries.isEmpty)
        #expect(try roundTrip(entries) == entries)
        let verdicts = try vault.verifyAudit()
        #expect(try roundTrip(verdicts) == verdicts)
        #expect(try roundTrip(vault.openReport) == vault.openReport)
        let status = try vault.status()
        let decoded = try JSONDecoder().decode(VaultStatus.self, from: JSONEncoder().encode(status))
        #expect(decoded.backend == status.backend && decoded.protection == status.protection)
    }
}
