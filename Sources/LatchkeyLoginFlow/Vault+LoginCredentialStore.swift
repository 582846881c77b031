import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Latchkey's `Vault` is the store a `LoginController` keeps the username, the
/// user's choice and the session in: the login's grant (access and refresh token,
/// each with its own expiry) is saved as one item, the session `access`.
extension Vault: LoginCredentialStore {
    /// Saves the tokens as one grant, session `access` of `account`, replacing an
    /// earlier login's in one write (so no refresh token outlives the session it
    /// belonged to), each token with its own expiry as the server gave it, the
    /// item's life capped by the policy. `accessToken(named:account:refresher:)`
    /// refreshes it.
    /// - Parameters:
    ///   - tokens: The tokens the server issued.
    ///   - account: The username that logged in.
    /// - Throws: `LatchkeyError` when the grant could not be stored.
    public func saveSession(_ tokens: SessionTokens, account: String) async throws {
        let grant = Grant(
            accessToken: tokens.accessToken, accessTokenExpires: tokens.expires, refreshToken: tokens.refreshToken,
            refreshTokenExpires: tokens.refreshTokenExpires)
        try await saveGrant(grant, name: "access", account: account)
    }
}
