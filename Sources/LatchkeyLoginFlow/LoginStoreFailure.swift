/// A credential-store call the ``LoginController`` could not complete.
public struct LoginStoreFailure: Sendable {
    /// Which store call failed.
    public enum Operation: Sendable, Hashable {
        /// Loading the remembered username and the remember choice.
        case load
        /// ``LoginCredentialStore/rememberUsername(_:)``.
        case rememberUsername
        /// ``LoginCredentialStore/setUsernameMemoryAllowed(_:)``.
        case setUsernameMemoryAllowed
        /// ``LoginCredentialStore/saveSession(_:account:)``.
        case saveSession
        /// ``LoginCredentialStore/logout(account:)``.
        case logout
    }

    /// Which store call failed.
    public let operation: Operation
    /// The error the store threw.
    public let error: any Error

    /// Creates a failure report.
    /// - Parameters:
    ///   - operation: Which store call failed.
    ///   - error: The error the store threw.
    public init(operation: Operation, error: any Error) {
        self.operation = operation
        self.error = error
    }
}
