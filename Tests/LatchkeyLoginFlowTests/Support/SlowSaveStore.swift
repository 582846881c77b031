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

    func lastUsername() async throws -> String? { try await vault.lastUsername() }
    func isUsernameMemoryAllowed() async throws -> Bool { try await vault.isUsernameMemoryAllowed() }
    func setUsernameMemoryAllowed(_ remembers: Bool) async throws {
        try await vault.setUsernameMemoryAllowed(remembers)
    }
    func rememberUsername(_ username: String) async throws -> PolicyDecision {
        try await vault.rememberUsername(username)
    }
    func logout(account: String?) async throws -> LogoutReport { try await vault.logout(account: account) }

    func saveSession(_ tokens: SessionTokens, account: String) async throws {
        try await Task.sleep(for: delay)
        try await vault.saveSession(tokens, account: account)
    }
}
