import Latchkey

/// Where the login screen keeps what outlives it: the remembered username,
/// the user's choice to remember it, and the session. Latchkey's `Vault`
/// provides these.
///
/// The contract:
/// - `lastUsername()` returns nil when none is kept or remembering is off;
///   "nothing kept" is never an error.
/// - `setUsernameMemoryAllowed(false)` forgets the remembered username at once;
///   while it is off, `rememberUsername(_:)` keeps nothing.
/// - `logout(account:)` wipes what the app's policy says (at least the
///   account's session); a nil account wipes per policy without one.
/// - Errors mean the store could not answer or could not keep the change.
/// - All methods are safe to call concurrently.
public protocol LoginCredentialStore: Sendable {
    /// The username remembered by the last successful login, if any.
    /// - Returns: The username, or nil.
    /// - Throws: When the store cannot answer.
    func lastUsername() async throws -> String?

    /// Whether usernames are remembered (false after the user opted out).
    /// - Returns: The user's choice.
    /// - Throws: When the store cannot answer.
    func isUsernameMemoryAllowed() async throws -> Bool

    /// Stores the user's choice; `false` also forgets the remembered username.
    /// - Parameter allowed: Whether usernames may be remembered.
    /// - Throws: When the choice could not be kept.
    func setUsernameMemoryAllowed(_ allowed: Bool) async throws

    /// Remembers `username` for the next login, unless remembering is off.
    /// - Parameter username: The username that logged in.
    /// - Returns: `allow` when it was remembered, else why it was not.
    /// - Throws: When it could not be kept.
    @discardableResult
    func rememberUsername(_ username: String) async throws -> PolicyDecision

    /// Keeps the session issued to `account`.
    /// - Parameters:
    ///   - tokens: The session tokens.
    ///   - account: The username that logged in.
    /// - Throws: When the session could not be kept.
    func saveSession(_ tokens: SessionTokens, account: String) async throws

    /// Logs out: wipes per policy.
    /// - Parameter account: The account logging out, if known.
    /// - Returns: What was wiped and kept.
    /// - Throws: When the wipe did not complete.
    @discardableResult
    func logout(account: String?) async throws -> LogoutReport
}
