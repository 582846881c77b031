/// What happened to a credential, as a stable name in the audit trail.
///
/// Extensible like `LatchkeyError.Code`: new events are new static constants,
/// and a trail written by a newer Latchkey still reads.
public struct AuditEvent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The event's stable name, such as `session.saved`.
    public let rawValue: String

    /// Creates an event from its stable name.
    /// - Parameter rawValue: Lower-case words joined by dots, such as `session.saved`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The event's stable name.
    public var description: String { rawValue }

    /// A username was remembered.
    public static let usernameRemembered = AuditEvent(rawValue: "username.remembered")
    /// Remembering a username was skipped (the user opted out, or the policy forbids it).
    public static let usernameSkipped = AuditEvent(rawValue: "username.skipped")
    /// The remembered username was erased.
    public static let usernameForgotten = AuditEvent(rawValue: "username.forgotten")
    /// The user turned remembering the username on.
    public static let rememberEnabled = AuditEvent(rawValue: "remember.enabled")
    /// The user turned remembering the username off (which erases it).
    public static let rememberDisabled = AuditEvent(rawValue: "remember.disabled")
    /// A session token was saved.
    public static let sessionSaved = AuditEvent(rawValue: "session.saved")
    /// A session token was read.
    public static let sessionRead = AuditEvent(rawValue: "session.read")
    /// A session token was deleted.
    public static let sessionDeleted = AuditEvent(rawValue: "session.deleted")
    /// An expired session token was found on reading and deleted.
    public static let sessionExpired = AuditEvent(rawValue: "session.expired")
    /// A named secret was saved.
    public static let secretSaved = AuditEvent(rawValue: "secret.saved")
    /// A named secret was read.
    public static let secretRead = AuditEvent(rawValue: "secret.read")
    /// A named secret was deleted.
    public static let secretDeleted = AuditEvent(rawValue: "secret.deleted")
    /// A named secret whose policy lifetime (`secrets.maxAgeSeconds`) had passed was found and deleted.
    public static let secretExpired = AuditEvent(rawValue: "secret.expired")
    /// An account (or every account) logged out; the detail says what the policy wiped.
    public static let logout = AuditEvent(rawValue: "logout")
    /// Everything of the namespace was wiped.
    public static let wipe = AuditEvent(rawValue: "wipe")
    /// The Secret Service was unavailable and the encrypted file was used instead.
    public static let backendFallback = AuditEvent(rawValue: "backend.fallback")
    /// A file vault was moved into the Secret Service.
    public static let migrate = AuditEvent(rawValue: "migrate")
    /// A vault could not be opened with the key given.
    public static let unlockFailed = AuditEvent(rawValue: "unlock.failed")
    /// Stored data failed authentication.
    public static let tamperDetected = AuditEvent(rawValue: "tamper.detected")
    /// The policy refused an operation.
    public static let policyDenied = AuditEvent(rawValue: "policy.denied")
    /// The trail was trimmed; this entry carries the MAC the kept entries continue from.
    public static let checkpoint = AuditEvent(rawValue: "audit.checkpoint")
    /// A broken trail was set aside and a new chain started (`latchkey audit reset`);
    /// the detail names the kept segment, the last verified sequence number and why.
    public static let auditReset = AuditEvent(rawValue: "audit.reset")
    /// A session's grant was refreshed through the app's refresher: `ok` (the
    /// rotated grant was saved), `skipped` (a newer grant was already there and was
    /// kept), `failed` with `refreshRejected` (the server refused it; the session
    /// ended as the logout policy says) or `refreshUnavailable` (the grant was kept).
    public static let sessionRefreshed = AuditEvent(rawValue: "session.refreshed")
    /// The store in use changed back to the Secret Service after a fallback to the encrypted file.
    public static let backendReturned = AuditEvent(rawValue: "backend.returned")

    /// Whether `rawValue` is a well-formed event name: 1 to 64 characters of
    /// lower-case words (`a-z`, `0-9`, `-`) joined by single dots.
    var isWellFormed: Bool {
        let words = rawValue.split(separator: ".", omittingEmptySubsequences: false)
        return (1...64).contains(rawValue.utf8.count)
            && words.allSatisfy { word in
                !word.isEmpty && word.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }
            }
    }
}
