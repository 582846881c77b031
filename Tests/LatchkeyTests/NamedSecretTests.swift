import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Named secrets", .sandboxed)
struct NamedSecretTests {
    @Test(
        "a named secret outlives the session cap, survives the default logout, is listed without its value, and wipe erases it",
        arguments: TestedStore.allCases)
    func outlivesSessions(store: TestedStore) throws {
        let clock = HandClock()
        let vault = try store.open(policy: try Policy(name: "short", sessionMaxAge: 3600), clock: clock.wallClock)
        #expect(try vault.saveSecret(SecretBytes(utf8: "sk-123"), named: "api-key") == nil)
        try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        clock.advance(by: 40 * 86_400)
        #expect(try vault.session(named: "access", account: "alice") == nil)
        #expect(try vault.secret(named: "api-key")?.value == SecretBytes(utf8: "sk-123"))
        #expect(try vault.secrets().map(\.name) == ["api-key"])
        #expect(try vault.status().secretCount == 1)
        let logout = try vault.logout()
        #expect(logout.wipedSecrets.isEmpty && logout.keptSecrets == 1)
        #expect(
            try store.reopen(vault, policy: vault.policy).secret(named: "api-key") != nil, "another process reads it")
        let wipe = try vault.wipe()
        #expect(wipe.wipedSecrets.map(\.name) == ["api-key"])
        #expect(try vault.secret(named: "api-key") == nil)
        #expect(try vault.storedKeys([.secret]).isEmpty)
        let events = try vault.auditEntries().map(\.event)
        #expect(events.contains(.secretSaved) && events.contains(.secretRead))
    }

    @Test(
        "under secrets.onLogout wipe any logout deletes them, and secrets.maxAgeSeconds expires them (secret.expired)",
        arguments: TestedStore.allCases)
    func policyWipesAndExpires(store: TestedStore) throws {
        let clock = HandClock()
        let policy = try Policy(name: "wiping", secretMaxAge: 60, secretsOnLogout: .wipe)
        let vault = try store.open(policy: policy, clock: clock.wallClock)
        let expiry = try vault.saveSecret(SecretBytes(utf8: "v"), named: "client-secret")
        #expect(expiry == clock.now.addingTimeInterval(60))
        try vault.saveSecret(SecretBytes(utf8: "w"), named: "cert-password")
        let report = try vault.logout(account: "alice")
        #expect(report.wipedSecrets.map(\.name) == ["cert-password", "client-secret"])
        #expect(try vault.secrets().isEmpty)

        try vault.saveSecret(SecretBytes(utf8: "v"), named: "client-secret")
        clock.advance(by: 59)
        #expect(try vault.secret(named: "client-secret") != nil)
        clock.advance(by: 2)
        #expect(try vault.secret(named: "client-secret") == nil)
        #expect(try vault.auditEntries().last?.event == .secretExpired)
        #expect(try vault.storedKeys([.secret]).isEmpty)
    }

    @Test("deleting, an empty name and a past expiry", arguments: TestedStore.allCases)
    func deleteAndRefusals(store: TestedStore) throws {
        let vault = try store.open()
        try vault.saveSecret(SecretBytes(utf8: "v"), named: "api-key")
        #expect(try vault.deleteSecret(named: "api-key"))
        #expect(try !vault.deleteSecret(named: "api-key"))
        #expect(throws: LatchkeyError.self) { try vault.saveSecret(SecretBytes(utf8: "v"), named: "") }
        let past = #expect(throws: LatchkeyError.self) {
            try vault.saveSecret(SecretBytes(utf8: "v"), named: "old", expires: Date().addingTimeInterval(-1))
        }
        #expect(past?.code == .invalidInput && past?.message.contains("secret 'old'") == true)
        #expect(try vault.storedKeys([.secret]).isEmpty)
        #expect(
            try vault.auditEntries().map(\.event) == [.secretSaved, .secretDeleted, .secretDeleted]
                && vault.auditEntries().last?.outcome == .skipped)
    }
}
