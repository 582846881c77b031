#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an authorization server issues: an access token and, usually, a refresh
/// token, each with its own expiry, with the token type and scope. A vault keeps
/// a grant as one item, so a rotated grant replaces both tokens in one write
/// (``Vault/saveGrant(_:name:account:)-6ntoj``).
public struct Grant: Sendable, Equatable {
    /// The access token.
    public let accessToken: SecretBytes
    /// When the access token expires, when the server said so.
    public let accessTokenExpires: Date?
    /// The refresh token, when the server issued one.
    public let refreshToken: SecretBytes?
    /// When the refresh token expires, when the server said so; nil keeps it as
    /// long as the policy allows a session.
    public let refreshTokenExpires: Date?
    /// The token type, such as `Bearer`.
    public let tokenType: String
    /// The scope the tokens were issued for, when the server said.
    public let scope: String?

    /// Creates a grant.
    /// - Parameters:
    ///   - accessToken: The access token.
    ///   - accessTokenExpires: When it expires, if known.
    ///   - refreshToken: The refresh token, if any.
    ///   - refreshTokenExpires: When the refresh token expires, if known.
    ///   - tokenType: The token type; `Bearer` by default.
    ///   - scope: The scope, if known.
    public init(
        accessToken: SecretBytes, accessTokenExpires: Date? = nil, refreshToken: SecretBytes? = nil,
        refreshTokenExpires: Date? = nil, tokenType: String = "Bearer", scope: String? = nil
    ) {
        self.accessToken = accessToken
        self.accessTokenExpires = accessTokenExpires
        self.refreshToken = refreshToken
        self.refreshTokenExpires = refreshTokenExpires
        self.tokenType = tokenType
        self.scope = scope
    }

    /// Whether the access token should be refreshed at `now`: it has expired, or
    /// less than min(30 s, a tenth of its lifetime since `issued`) remains. An
    /// access token without an expiry is never due.
    /// - Parameters:
    ///   - now: The moment to judge.
    ///   - issued: When the grant was issued (saved).
    /// - Returns: true when a refresh is due.
    public func isRefreshDue(at now: Date, issued: Date) -> Bool {
        guard let expires = accessTokenExpires else { return false }
        let margin = min(30, max(0, expires.timeIntervalSince(issued)) / 10)
        return expires.timeIntervalSince(now) < margin
    }

    /// This grant, rotated by `response`: the response's tokens, and this grant's
    /// refresh token (with its expiry) when the response issued none, as RFC 6749
    /// section 6 allows.
    /// - Parameter response: The grant the refresh returned.
    /// - Returns: The grant to keep.
    public func rotated(by response: Grant) -> Grant {
        guard response.refreshToken == nil else { return response }
        return Grant(
            accessToken: response.accessToken, accessTokenExpires: response.accessTokenExpires,
            refreshToken: refreshToken, refreshTokenExpires: refreshTokenExpires, tokenType: response.tokenType,
            scope: response.scope ?? scope)
    }
}
