extension Policy {
    /// Which store a policy asks for (`backend.kind`).
    public enum BackendChoice: String, Sendable, CaseIterable {
        /// The Secret Service when it answers, else the encrypted file if allowed.
        case auto
        /// The Secret Service only; fail with `.unavailable` when it does not answer.
        case secretService = "secret-service"
        /// The encrypted file only.
        case file
    }
}
