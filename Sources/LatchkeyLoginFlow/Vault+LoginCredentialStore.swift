import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Latchkey's `Vault` is the store a `LoginController` keeps the username, the
/// user's choice and the session in: the access token is saved as the session
/// `access`, the refresh token (when the server issues one) as `refresh`.
extension Vault: LoginCredentialStore {
    /// Saves the access token as session `access` and the refresh token, if
    /// any, as session `refresh` of `account` (deleting an earlier `refresh`
    /// when the server issued none), each with its own expiry as the server gave
    /// it, capped by the policy.
    /// - Parameters:
    ///   - tokens: The tokens the server issued.
    ///   - account: The username that logged in.
    /// - Throws: `LatchkeyError` when a token could not be stored.
    public func saveSession(_ tokens: SessionTokens, account: String) async throws {
        try await saveSession(tokens.accessToken, name: "access", account: account, expires: tokens.expires)
        if let refresh = tokens.refreshToken {
            try await saveSession(refresh, name: "refresh", account: account, expires: tokens.refreshTokenExpires)
        } else {
            // A refresh token from an earlier login must not outlive the session it belonged to.
            try await deleteSession(named: "refresh", account: account)
        }
    }
}
