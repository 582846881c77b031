/// What an ``Authenticator`` reports for one login attempt.
public enum AuthenticationResult: Sendable {
    /// The server accepted the credentials and issued a session.
    case success(SessionTokens)
    /// The attempt failed, for the given class of reason.
    case failure(LoginFailure)
}
