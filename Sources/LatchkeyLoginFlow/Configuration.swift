import Latchkey

extension Login {
    /// What an app adds to the built-in rules of the login screen.
    public struct Configuration: Sendable {
        /// Decides whether non-empty input makes sense to send, beyond being
        /// non-empty (an e-mail address shape, a minimum length).
        ///
        /// It must be a pure function: same input, same answer, no I/O. It is
        /// consulted only when both fields are non-empty.
        public let validator: @Sendable (_ username: String, _ password: SecretBytes) -> Bool

        /// Creates a configuration.
        /// - Parameter validator: A pure check of the input; accepts all
        ///   non-empty input by default.
        public init(
            validator: @escaping @Sendable (_ username: String, _ password: SecretBytes) -> Bool = { _, _ in true }
        ) {
            self.validator = validator
        }
    }
}
