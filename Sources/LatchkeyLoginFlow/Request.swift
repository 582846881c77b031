import Latchkey

extension Login {
    /// One login attempt, as handed to the ``Authenticator``.
    public struct Request: Sendable {
        /// The attempt's generation id; its response must carry the same id.
        public let generation: Int
        /// The username, never empty.
        public let username: String
        /// The password, never empty.
        public let password: SecretBytes

        /// Creates a request.
        /// - Parameters:
        ///   - generation: The attempt's generation id.
        ///   - username: The username.
        ///   - password: The password.
        public init(generation: Int, username: String, password: SecretBytes) {
            self.generation = generation
            self.username = username
            self.password = password
        }
    }
}
