/// A localisable text of the login screen: labels and inline messages.
///
/// Look a key up with ``text(in:)``. The raw values are stable identifiers
/// for translation tools.
public enum MessageKey: String, Sendable, Hashable, CaseIterable {
    /// The username field's label.
    case usernameLabel = "login.label.username"
    /// The password field's label.
    case passwordLabel = "login.label.password"
    /// The login button's title.
    case logInButton = "login.button.logIn"
    /// The remember toggle's label.
    case rememberUsernameLabel = "login.label.rememberUsername"
    /// Who is signed in, after a successful login; `{account}` stands for the account.
    case signedInAs = "login.status.signedInAs"
    /// The logout button's title.
    case logOutButton = "login.button.logOut"
    /// The text beside the progress indicator.
    case loggingIn = "login.progress.loggingIn"
    /// The rate-limit countdown; `{seconds}` stands for the seconds left.
    case retryCountdown = "login.progress.retryCountdown"
    /// The credentials were not accepted (never says which field was wrong).
    case invalidCredentials = "login.error.invalidCredentials"
    /// The account is locked.
    case accountLocked = "login.error.accountLocked"
    /// Too many attempts.
    case rateLimited = "login.error.rateLimited"
    /// The server cannot be reached.
    case networkUnreachable = "login.error.networkUnreachable"
    /// The server did not answer in time.
    case timedOut = "login.error.timedOut"
    /// The server failed.
    case serverError = "login.error.serverError"
    /// The server's answer could not be understood.
    case malformedResponse = "login.error.malformedResponse"
    /// Signed in, but the session could not be kept for the next start.
    case sessionNotSaved = "login.error.sessionNotSaved"
}
