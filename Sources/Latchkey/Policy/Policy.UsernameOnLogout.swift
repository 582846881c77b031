extension Policy {
    /// What a logout does with the remembered username (`onLogout.username`).
    public enum UsernameOnLogout: String, Sendable, CaseIterable {
        /// Keep it, so the login screen can prefill it.
        case keep
        /// Erase it.
        case forget
    }
}
