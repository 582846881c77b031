extension Login {
    /// Work the reducer asks its driver to do.
    public enum Effect: Sendable {
        /// Send this login request to the server.
        case sendLoginRequest(Request)
        /// Abandon the request with this generation id; its response will be ignored.
        case cancelLoginRequest(generation: Int)
        /// Remember this username for the next time the screen appears.
        case rememberUsername(String)
        /// Store the user's choice to remember the username or not; `false`
        /// also forgets the remembered username at once.
        case setUsernameMemoryAllowed(Bool)
        /// Keep these session tokens for this account.
        case saveSession(SessionTokens, account: String)
        /// Log out: wipe per the app's policy (the account's session at least).
        case logout(account: String?)
        /// Move the keyboard focus to this field.
        case focus(Field)
    }
}
