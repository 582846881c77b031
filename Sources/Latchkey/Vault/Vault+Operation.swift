/// What the act step of a vault operation hands back: the caller's result, and
/// the audit entry that records it (or none, for a read that found nothing).
struct OperationOutcome<Value> {
    /// What the caller gets.
    var value: Value
    /// The entry to append; nil records nothing.
    var entry: Entry?

    /// How the trail records the outcome; a nil field takes the operation's own.
    struct Entry {
        var event: AuditEvent?
        var outcome: AuditOutcome = .ok
        var account: String?
        var detail: String?
    }

    /// `value`, recorded as the operation's event with `outcome`.
    init(_ value: Value, _ outcome: AuditOutcome = .ok, event: AuditEvent? = nil, account: String? = nil, detail: String? = nil) {
        self.value = value
        self.entry = Entry(event: event, outcome: outcome, account: account, detail: detail)
    }

    /// `value`, with nothing recorded.
    static func unrecorded(_ value: Value) -> OperationOutcome {
        var outcome = OperationOutcome(value)
        outcome.entry = nil
        return outcome
    }
}

extension Vault {
    /// The one path of every audited vault operation: `act` decides (asking
    /// the policy) and has the store act, the trail records what happened, and
    /// the caller gets the value.
    ///
    /// When `act` throws, the failure is recorded (as `unlock.failed` for a
    /// wrong key, `tamper.detected` for altered data, else as `event` failed)
    /// and the operation's own error is rethrown, never an audit error that
    /// would hide it. When the outcome cannot be recorded, the policy's
    /// `audit.onFailure` decides (``record(_:_:account:detail:)``).
    /// - Parameters:
    ///   - event: The operation's audit event.
    ///   - account: The account it concerns, recorded as a pseudonym.
    ///   - detail: A non-secret detail, such as the session's name.
    ///   - act: Decides and acts; returns the value and how to record it.
    /// - Returns: The value `act` returned.
    func perform<Value>(
        _ event: AuditEvent, account: String? = nil, detail: String? = nil,
        _ act: () throws -> OperationOutcome<Value>
    ) throws -> Value {
        let result: OperationOutcome<Value>
        do {
            result = try act()
        } catch let error as LatchkeyError {
            let failure: AuditEvent = switch error.code {
            case .wrongKey: .unlockFailed
            case .tampered: .tamperDetected
            default: event
            }
            try? record(failure, .failed(error.code), account: account, detail: detail)
            throw error
        }
        if let entry = result.entry {
            try record(entry.event ?? event, entry.outcome, account: entry.account ?? account, detail: entry.detail ?? detail)
        }
        return result.value
    }
}
