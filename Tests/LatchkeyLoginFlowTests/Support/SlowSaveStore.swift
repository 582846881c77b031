import Latchkey
import LatchkeyLoginFlow

/// A `Vault` whose session saves take a while, as a busy keyring's do.
final class SlowSaveStore: LoginCredentialStore {
    let vault: Vault
    let delay: Duration

    init(vault: Vault, delay: Duration) {
        self.vault = vault
        self.delay = delay
    }

    func rememberedUsername() async throws -> String? { try await vault.rememberedUsername() }
    func remembersUsername() async throws -> Bool { try await vault.remembersUsername() }
    func setRemembersUsername(_ remembers: Bool) async throws { try await vault.setRemembersUsername(remembers) }
    func rememberUsername(_ username: String) async throws -> PolicyDecision {
        try await vault.rememberUsername(username)
    }
    func logout(account: String?) async throws -> LogoutReport { try await vault.logout(account: account) }

    func saveSession(_ tokens: SessionTokens, account: String) async throws {
        try await Task.sleep(for: delay)
        try await vault.saveSession(tokens, account: account)
    }
}
