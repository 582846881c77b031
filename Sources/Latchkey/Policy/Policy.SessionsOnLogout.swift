extension Policy {
    /// What a logout does with the account's sessions (`onLogout.sessions`).
    public enum SessionsOnLogout: String, Sendable, CaseIterable {
        /// Delete every session of the account.
        case wipe
        /// Leave the sessions in place (they still expire).
        case keep
    }
}
