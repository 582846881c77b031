import Latchkey

/// Sends a login attempt to the server.
///
/// The contract:
/// - Every outcome is a value: success with tokens, or one ``LoginFailure``
///   class. Nothing is thrown.
/// - When the calling task is cancelled, return ``LoginFailure/cancelled`` soon.
/// - Never log or keep the password beyond the call.
public protocol Authenticator: Sendable {
    /// Performs one login attempt.
    /// - Parameters:
    ///   - username: The username, never empty.
    ///   - password: The password, never empty.
    /// - Returns: The session tokens, or the failure class.
    func authenticate(username: String, password: SecretBytes) async -> AuthenticationResult
}
