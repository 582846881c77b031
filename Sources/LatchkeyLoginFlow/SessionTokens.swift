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
    /// When the session ends, when the server says so.
    public let expires: Date?

    /// Creates a set of session tokens.
    /// - Parameters:
    ///   - accessToken: The access token.
    ///   - refreshToken: The refresh token, if any.
    ///   - expires: When the session ends, if known.
    public init(accessToken: SecretBytes, refreshToken: SecretBytes? = nil, expires: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expires = expires
    }
}
