import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("README", .sandboxed)
struct ReadmeExampleTests {
    /// It uses the default store directory and the Secret Service, so it runs only inside
    /// `.ci/with-keyring`, whose HOME, XDG directories and keyring are thrown away afterwards.
    @Test("the README's example runs as written (in the test sandbox's XDG_DATA_HOME)", .needsSecretService)
    func example() async throws {
        let token = "token-from-the-server"
        let appID = "com.example.readme\(UInt32.random(in: 0...UInt32.max))"
        let vault = try await Vault.open(appID: AppID(appID))
        let lastUser = try await vault.rememberedUsername()
        #expect(lastUser == nil)
        try await vault.rememberUsername("alice")
        try await vault.saveSession(
            SecretBytes(utf8: token), name: "access", account: "alice",
            expires: Date().addingTimeInterval(3600))
        let access = try await vault.session(named: "access", account: "alice")
        #expect(access?.value == SecretBytes(utf8: token))
        try await vault.logout(account: "alice")
        #expect(try await vault.session(named: "access", account: "alice") == nil)
        #expect(try await vault.rememberedUsername() == "alice")
        try await vault.wipe()
    }
}
