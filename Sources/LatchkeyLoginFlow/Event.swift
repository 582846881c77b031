import Latchkey

extension Login {
    /// Something that happened: a user action, a server response, the screen's
    /// life cycle, or time passing.
    public enum Event: Sendable {
        /// The screen appeared, with what the driver loaded from the credential
        /// store: the remembered username and whether remembering is on.
        case appeared(rememberedUsername: String?, remembersUsername: Bool)
        /// The screen disappeared; a request in flight is abandoned.
        case disappeared
        /// The user edited the username field.
        case usernameChanged(String)
        /// The user edited the password field (a keystroke, a paste).
        case passwordChanged(SecretBytes)
        /// Code cleared the password field (not a keystroke).
        case passwordCleared
        /// The user pressed Return in a field.
        case returnPressed(in: Field)
        /// The user pressed the login button.
        case submitTapped
        /// The server answered the request with the given generation id, at the given time.
        case responseReceived(generation: Int, result: AuthenticationResult, at: ContinuousClock.Instant)
        /// The user switched remembering the username on or off.
        case rememberUsernameChanged(Bool)
        /// The user logged out (from wherever the app offers it).
        case logoutRequested
        /// Time passed; drives the rate-limit countdown.
        case tick(now: ContinuousClock.Instant)
        /// The session issued at a successful login could not be kept by the
        /// credential store: the account is signed in for now, but will have
        /// to log in again next time. Taken only while `account` is signed in.
        case sessionSaveFailed(account: String)
    }
}
