import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The tokens a server issues on a successful login.
public struct SessionTokens: Sendable {
    /// The access token.
    public let accessToken: SecretBytes
    /// The refresh token, when the server issues one.
    public let refreshToken: SecretBytes?
    /// When the access token expires, when the server says so (OAuth's `expires_in`).
    public let expires: Date?
    /// When the refresh token expires, when the server says so; nil keeps it as long
    /// as the policy allows a session (`session.maxAgeSeconds`). Never the access
    /// token's expiry: a one-hour access token does not end a month-long refresh token.
    public let refreshTokenExpires: Date?

    /// Creates a set of session tokens.
    /// - Parameters:
    ///   - accessToken: The access token.
    ///   - refreshToken: The refresh token, if any.
    ///   - expires: When the access token expires, if known.
    ///   - refreshTokenExpires: When the refresh token expires, if known.
    public init(
        accessToken: SecretBytes, refreshToken: SecretBytes? = nil, expires: Date? = nil,
        refreshTokenExpires: Date? = nil
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expires = expires
        self.refreshTokenExpires = refreshTokenExpires
    }
}
