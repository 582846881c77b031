extension Policy {
    /// What a logout does with the account's sessions (`onLogout.sessions`).
    public enum SessionsOnLogout: String, Sendable, CaseIterable {
        /// Delete every session of the account.
        case wipe
        /// Leave the sessions in place (they still expire).
        case keep
    }
}

extension Policy {
    /// What a logout does with the app's named secrets (`secrets.onLogout`).
    public enum SecretsOnLogout: String, Sendable, CaseIterable {
        /// Leave them in place: an API key or client secret belongs to the app, not to whoever logged in.
        case keep
        /// Delete every named secret, whichever account logs out.
        case wipe
    }
}
