/// The one error type Latchkey throws.
///
/// Callers act on ``code``, which is stable and extensible, and, where a system
/// call failed, on its ``errnoCode`` (`ENOSPC` and `EACCES` call for different
/// remedies). Two errors are equal when their codes and their `errno` values are:
/// the ``message`` is for people (and never contains a secret), and ``cFunction``
/// names the C call that failed, for diagnosis. Apps show the error through
/// `localizedDescription` (it is a `LocalizedError` whose description is the message).
public struct LatchkeyError: Error, Sendable, Equatable, Hashable {
    /// What went wrong, as a stable identifier.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, as used in JSON output and logs.
        public let rawValue: String

        /// Creates a code from its stable name.
        /// - Parameter rawValue: The code's name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's stable name.
        public var description: String { rawValue }

        /// The item, vault or file does not exist.
        public static let notFound = Code(rawValue: "notFound")
        /// The store cannot be reached: no Secret Service, no session bus, or a fallback the policy forbids.
        public static let unavailable = Code(rawValue: "unavailable")
        /// The store is locked and cannot be unlocked without a prompt.
        public static let locked = Code(rawValue: "locked")
        /// The store did not answer within its deadline.
        public static let timedOut = Code(rawValue: "timedOut")
        /// Stored data failed authentication: it was altered, truncated or spliced.
        public static let tampered = Code(rawValue: "tampered")
        /// The passphrase or key file does not open the vault.
        public static let wrongKey = Code(rawValue: "wrongKey")
        /// A file or directory is accessible to other users or owned by someone else.
        public static let insecurePermissions = Code(rawValue: "insecurePermissions")
        /// The policy forbids the operation.
        public static let policyDenied = Code(rawValue: "policyDenied")
        /// An argument, a policy or stored data is malformed.
        public static let invalidInput = Code(rawValue: "invalidInput")
        /// A file or directory could not be created.
        public static let cannotCreate = Code(rawValue: "cannotCreate")
        /// Reading or writing failed.
        public static let io = Code(rawValue: "io")
        /// The authorization server refused a session's refresh token
        /// (`invalid_grant` and the like): the session has ended, log in again.
        public static let refreshRejected = Code(rawValue: "refreshRejected")
        /// A session's refresh could not get an answer from the authorization server
        /// (network, 5xx, timeout, an unreadable answer): the grant is kept, try again.
        public static let refreshUnavailable = Code(rawValue: "refreshUnavailable")
        /// A bug or an impossible state inside Latchkey.
        public static let `internal` = Code(rawValue: "internal")
    }

    /// What went wrong.
    public let code: Code
    /// A human explanation that never contains a secret.
    public let message: String
    /// The C function whose failure caused this error, if any.
    public let cFunction: String?
    /// The `errno` value of the failed system call, such as `ENOSPC`; nil when
    /// no system call failed.
    public let errnoCode: Int32?

    /// Creates an error.
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: A human explanation; it must not contain a secret.
    ///   - cFunction: The failing C function, if any.
    ///   - errnoCode: The failed system call's `errno` value, if any.
    public init(_ code: Code, _ message: String, cFunction: String? = nil, errnoCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.cFunction = cFunction
        self.errnoCode = errnoCode
    }

    /// Compares what a caller can act on: the codes and the `errno` values.
    public static func == (lhs: LatchkeyError, rhs: LatchkeyError) -> Bool {
        lhs.code == rhs.code && lhs.errnoCode == rhs.errnoCode
    }

    /// Hashes the code and the `errno` value.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(errnoCode)
    }
}
