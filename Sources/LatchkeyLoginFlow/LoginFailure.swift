/// Why a login attempt did not succeed: one case per failure class.
///
/// Each class has a fixed password rule (``clearsPassword``) and message
/// (``messageKey``). No class says whether the username or the password was
/// wrong.
public enum LoginFailure: Sendable, Hashable {
    /// The server rejected the username and password together.
    case invalidCredentials
    /// The account is locked.
    case accountLocked
    /// Too many attempts; the server accepts the next one after `retryAfter`.
    case rateLimited(retryAfter: Duration)
    /// The server could not be reached (offline, DNS, refused connection).
    case networkUnreachable
    /// The server did not answer in time.
    case timedOut
    /// The server failed (a 5xx status).
    case serverError
    /// The attempt was cancelled; shows no message.
    case cancelled
    /// The server's answer could not be understood.
    case malformedResponse

    /// Whether the password field is cleared after this failure: only after an
    /// authentication failure, never after a network or server problem.
    public var clearsPassword: Bool {
        switch self {
        case .invalidCredentials, .accountLocked: true
        case .rateLimited, .networkUnreachable, .timedOut, .serverError, .cancelled, .malformedResponse: false
        }
    }

    /// The inline message shown for this failure; nil for ``cancelled``.
    public var messageKey: MessageKey? {
        switch self {
        case .invalidCredentials: .invalidCredentials
        case .accountLocked: .accountLocked
        case .rateLimited: .rateLimited
        case .networkUnreachable: .networkUnreachable
        case .timedOut: .timedOut
        case .serverError: .serverError
        case .cancelled: nil
        case .malformedResponse: .malformedResponse
        }
    }
}
