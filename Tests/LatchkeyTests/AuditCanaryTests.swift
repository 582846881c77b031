import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("No secret in the audit trail", .sandboxed)
struct AuditCanaryTests {
    @Test(
        "after every Vault operation with canary values, no canary is in any file Latchkey wrote, in any encoding",
        arguments: TestedStore.allCases)
    func noCanary(store: TestedStore) throws {
        let username = "canary-user-\(UInt32.random(in: 0...UInt32.max))@example.com"
        let access = "canary-access-\(UInt64.random(in: 0...UInt64.max))"
        let refresh = "canary-refresh/+\(UInt64.random(in: 0...UInt64.max))"
        let apiKey = "canary-api-key-\(UInt64.random(in: 0...UInt64.max))"
        let vault = try store.open()
        try vault.rememberUsername(username)
        _ = try vault.lastUsername()
        try vault.saveSession(SecretBytes(utf8: access), name: "access", account: username)
        try vault.saveSession(
            SecretBytes(utf8: refresh), name: "refresh", account: username, expires: Date().addingTimeInterval(3600))
        _ = try vault.session(named: "access", account: username)
        _ = try vault.sessions()
        _ = try vault.sessions(account: username)
        try vault.deleteSession(named: "refresh", account: username)
        try vault.saveSecret(SecretBytes(utf8: apiKey), named: "api-key")
        _ = try vault.secret(named: "api-key")
        _ = try vault.secrets()
        try vault.setUsernameMemoryAllowed(false)
        try vault.rememberUsername(username)
        try vault.setUsernameMemoryAllowed(true)
        try vault.rememberUsername(username)
        try vault.forgetUsername()
        try vault.logout(account: username)
        try vault.saveSession(
            SecretBytes(utf8: access), name: "access", account: username, expires: Date().addingTimeInterval(0.3))
        usleep(400_000) // a session whose expiry has passed is refused, so this one expires here
        _ = try vault.session(named: "access", account: username)
        try vault.wipe()
        let status = try vault.status()
        let entries = try vault.auditEntries()
        // The Secret Service deletes item by item, so its logout and its wipe (of the
        // named secret, which the default logout keeps) also record `<event>.started` first.
        #expect(entries.count == (store == .secretService ? 18 : 16))
        #expect(try vault.verifyAudit().allSatisfy { $0.verification.isIntact })

        var scanned = try everything(below: vault.storeDirectory!)
        scanned += Array(String(describing: status).utf8) + Array(String(describing: entries).utf8)
        #expect(leaks(of: [username, access, refresh, apiKey], in: scanned).isEmpty)
        // The scan itself works: a trail line carrying the canary would be caught.
        #expect(!leaks(of: [access], in: Array(Data(access.utf8).base64EncodedString().utf8)).isEmpty)
    }
}
