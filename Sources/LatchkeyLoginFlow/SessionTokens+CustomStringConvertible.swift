extension SessionTokens: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted summary; never a token.
    public var description: String {
        "SessionTokens(accessToken: <redacted>, refreshToken: \(refreshToken == nil ? "none" : "<redacted>"), expires: \(expires.map { "\($0)" } ?? "none"), refreshTokenExpires: \(refreshTokenExpires.map { "\($0)" } ?? "none"))"
    }

    /// The same redacted summary as ``description``.
    public var debugDescription: String { description }

    /// A mirror that shows only the expiries, so `dump` shows no token.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["expires": expires as Any, "refreshTokenExpires": refreshTokenExpires as Any],
            displayStyle: .struct)
    }
}
