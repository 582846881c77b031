import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("LatchkeyTesting's vault kept in memory", .sandboxed)
struct TestVaultTests {
    let appID = try! AppID("com.example.memory")

    @Test("a vault kept in memory has no store directory, and its audit trail records and verifies")
    func noDirectory() throws {
        let vault = Vault.makeInMemory(appID: appID)
        #expect(vault.storeDirectory == nil)
        try vault.rememberUsername("alice")
        try vault.saveSession(SecretBytes(utf8: "t0ken"), name: "access", account: "alice")
        let report = try vault.logout(account: "alice")
        #expect(report.wipedSessions.map(\.name) == ["access"])
        #expect(try vault.lastUsername() == "alice")
        #expect(try vault.auditEntries().map(\.event) == [.usernameRemembered, .sessionSaved, .logout])
        let verdicts = try vault.verifyAudit()
        #expect(verdicts.count == 1)
        #expect(verdicts.first?.verification == .intact(entryCount: 3, lastSequence: 3))
        #expect(verdicts.first?.path.hasPrefix("memory:") == true)
        let status = try vault.status()
        #expect(status.storeDirectory == nil && status.auditTrails == verdicts.map(\.path))
    }

    @Test("two vaults on one InMemoryBackend are two processes on one store: one refresh between them, no reuse")
    func singleFlightAcrossProcesses() async throws {
        // The app's own test of its single-flight, as docs/ROTATION.md and the LatchkeyTesting
        // article "Testing token refresh" show it: two "processes" share one store.
        let store = InMemoryBackend()
        let first = Vault.makeInMemory(appID: appID, store: store)
        let second = Vault.makeInMemory(appID: appID, store: store)
        try await first.saveGrant(expiredGrant(), name: "s", account: "alice")
        let refresher = CountingRefresher.rotating(pause: .milliseconds(200))
        let tokens = try await accessTokensAtOnce(
            Array(repeating: [first, second], count: 4).flatMap { $0 }, refresher: refresher)
        #expect(
            refresher.calls == 1 && refresher.usedTokens == ["r0"], "refresh tokens presented: \(refresher.usedTokens)")
        #expect(tokens.count == 8 && tokens.allSatisfy { $0 == SecretBytes(utf8: "a1") })
        #expect(try await second.grant(named: "s", account: "alice")?.refreshToken == SecretBytes(utf8: "r1"))
    }

    @Test("under a test clock, a session with a 1 h life is live at 59 min and gone at 61 min, without sleeping")
    func clock() throws {
        let clock = TestClock()
        let vault = Vault.makeInMemory(appID: appID, clock: clock)
        let expiry = try vault.saveSession(
            SecretBytes(utf8: "t"), name: "access", account: "alice", expires: clock.now.addingTimeInterval(3600))
        #expect(expiry == clock.now.addingTimeInterval(3600))
        clock.advance(by: 59 * 60)
        #expect(try vault.session(named: "access", account: "alice") != nil)
        clock.advance(by: 2 * 60)
        #expect(try vault.session(named: "access", account: "alice") == nil)
        let entries = try vault.auditEntries()
        #expect(entries.map(\.event) == [.sessionSaved, .sessionRead, .sessionExpired])
        #expect(entries.last?.time == clock.now)
    }

    @Test(
        "a named secret in memory outlives the session cap under a test clock, and a wiping policy's logout deletes it")
    func namedSecret() throws {
        let clock = TestClock()
        let keeping = Vault.makeInMemory(
            appID: appID, policy: try Policy(name: "short", sessionMaxAge: 60), clock: clock)
        try keeping.saveSecret(SecretBytes(utf8: "sk"), named: "api-key")
        try keeping.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        clock.advance(by: 3600)
        #expect(try keeping.session(named: "access", account: "alice") == nil)
        #expect(try keeping.secret(named: "api-key")?.value == SecretBytes(utf8: "sk"))
        #expect(try keeping.logout().keptSecrets == 1)

        let wiping = Vault.makeInMemory(appID: appID, policy: try Policy(name: "w", secretsOnLogout: .wipe))
        try wiping.saveSecret(SecretBytes(utf8: "sk"), named: "api-key")
        #expect(try wiping.logout(account: "alice").wipedSecrets.map(\.name) == ["api-key"])
        #expect(try wiping.secrets().isEmpty)
    }

    @Test(
        "a failure injected on one item's write: the access token saves, the refresh token fails with the store's own error"
    )
    func failurePerItem() throws {
        let store = InMemoryBackend()
        let vault = Vault.makeInMemory(appID: appID, store: store)
        store.fail([.write], name: "refresh", with: LatchkeyError(.io, "the disk is full"))
        try vault.saveSession(SecretBytes(utf8: "a"), name: "access", account: "alice")
        let error = #expect(throws: LatchkeyError.self) {
            try vault.saveSession(SecretBytes(utf8: "r"), name: "refresh", account: "alice")
        }
        #expect(error?.code == .io && error?.message == "the disk is full", "the store's error, not an audit one")
        #expect(try vault.sessions().map(\.name) == ["access"])
        #expect(try vault.session(named: "refresh", account: "alice") == nil, "a read of it still works")
        let entries = try vault.auditEntries()
        #expect(entries.map(\.event).prefix(2) == [.sessionSaved, .sessionSaved])
        #expect(entries.map(\.outcome).prefix(2) == [.ok, .failed(.io)])
        #expect(try vault.verifyAudit().allSatisfy { $0.verification.isIntact })
    }

    @Test("a failure injected per operation: reads fail as a locked keyring would, lists do not; removed, all work")
    func failurePerOperation() throws {
        let store = InMemoryBackend()
        let vault = Vault.makeInMemory(appID: appID, store: store)
        try vault.saveSession(SecretBytes(utf8: "a"), name: "access", account: "alice")
        store.fail([.read], with: LatchkeyError(.locked, "the keyring is locked"))
        #expect(throws: LatchkeyError(.locked, "")) { try vault.session(named: "access", account: "alice") }
        #expect(try store.list(kind: .session).count == 1)
        #expect(throws: LatchkeyError(.locked, "")) { try vault.sessions() }
        store.removeFailures()
        #expect(try vault.session(named: "access", account: "alice")?.value == SecretBytes(utf8: "a"))
        store.fail(with: LatchkeyError(.unavailable, "gone"))
        #expect(throws: LatchkeyError(.unavailable, "")) { try vault.sessions() }
        #expect(throws: LatchkeyError(.unavailable, "")) { try store.deleteAll() }
    }
}
