#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A saved session token, such as an access or refresh token, with its account and times.
public struct Session: Sendable, Equatable {
    /// The account the session belongs to.
    public let account: String
    /// The token's name, such as `access` or `refresh`.
    public let name: String
    /// The token.
    public let value: SecretBytes
    /// When it was saved.
    public let created: Date
    /// When it stops being valid; always set, since the policy caps every session's life.
    public let expires: Date?

    /// Creates a session value.
    /// - Parameters:
    ///   - account: The account.
    ///   - name: The token's name.
    ///   - value: The token.
    ///   - created: When it was saved.
    ///   - expires: When it stops being valid.
    public init(account: String, name: String, value: SecretBytes, created: Date, expires: Date?) {
        self.account = account
        self.name = name
        self.value = value
        self.created = created
        self.expires = expires
    }

    /// The session a stored item of kind `session` holds.
    init(_ key: ItemKey, _ item: StoredItem) {
        self.init(account: key.account, name: key.name, value: item.value, created: item.created, expires: item.expires)
    }
}

/// What a session listing shows: everything but the token.
public struct SessionInfo: Sendable, Equatable, Hashable, Codable {
    /// The account the session belongs to.
    public let account: String
    /// The token's name.
    public let name: String
    /// When it was saved.
    public let created: Date
    /// When it stops being valid.
    public let expires: Date?
}

/// A named secret of the app, such as an API key, a client secret or a
/// certificate's password, with its times. It belongs to the app, not to an account.
public struct NamedSecret: Sendable, Equatable {
    /// The secret's name, such as `api-key`.
    public let name: String
    /// The secret.
    public let value: SecretBytes
    /// When it was saved.
    public let created: Date
    /// When it stops being valid; nil when neither the app nor the policy's
    /// `secrets.maxAgeSeconds` gave it an end.
    public let expires: Date?
}

/// What a listing of named secrets shows: everything but the value.
public struct SecretInfo: Sendable, Equatable, Hashable, Codable {
    /// The secret's name.
    public let name: String
    /// When it was saved.
    public let created: Date
    /// When it stops being valid; nil when it does not expire.
    public let expires: Date?
}
