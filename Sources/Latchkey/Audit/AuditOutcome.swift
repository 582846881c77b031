/// How the operation an audit entry records ended.
public enum AuditOutcome: Sendable, Hashable, Codable {
    /// It did what was asked.
    case ok
    /// It did nothing, by design (the user opted out of remembering, say).
    case skipped
    /// The policy refused it.
    case denied
    /// It failed with this error code.
    case failed(LatchkeyError.Code)

    /// The outcome's stable name in the trail: `ok`, `skipped`, `denied` or `failed`.
    public var name: String {
        switch self {
        case .ok: "ok"
        case .skipped: "skipped"
        case .denied: "denied"
        case .failed: "failed"
        }
    }

    /// The error code of a failure; nil otherwise.
    public var errorCode: LatchkeyError.Code? {
        if case .failed(let code) = self { return code }
        return nil
    }

    /// The outcome for a stable name and an optional error code, or nil when they do not fit together.
    init?(name: String, errorCode: String?) {
        switch (name, errorCode) {
        case ("ok", nil): self = .ok
        case ("skipped", nil): self = .skipped
        case ("denied", nil): self = .denied
        case ("failed", let code?) where !code.isEmpty: self = .failed(LatchkeyError.Code(rawValue: code))
        default: return nil
        }
    }
}
