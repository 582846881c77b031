/// What an app's refresher reports for one refresh: a new grant, or why there
/// is none, classified as the login screen's rules say (only a server that
/// really refused the grant ends the session).
public enum RefreshOutcome: Sendable {
    /// The server issued a new grant (RFC 6749 section 5.1).
    case refreshed(Grant)
    /// The server refused the refresh token (`invalid_grant` and the like, RFC 6749
    /// section 5.2): the session is over. The reason must not contain a token.
    case rejected(reason: String)
    /// The server could not be asked or did not answer usefully (network, 5xx,
    /// timeout, an unreadable answer): the grant is kept for the next try. The
    /// reason must not contain a token.
    case unavailable(reason: String)
}

/// An app's refresher: given the refresh token, asks the authorization server
/// for a new grant and classifies the answer. Latchkey calls it for a session
/// from at most one caller at a time, across threads, processes and the agent,
/// and never with a refresh token that has already been used successfully.
public typealias GrantRefresher = @Sendable (_ refreshToken: SecretBytes) async -> RefreshOutcome
