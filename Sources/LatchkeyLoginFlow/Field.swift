extension Login {
    /// A text field of the login screen.
    public enum Field: Sendable, Hashable, CaseIterable {
        /// The username field.
        case username
        /// The password field.
        case password
    }
}
