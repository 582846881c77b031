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
    init(
        _ value: Value, _ outcome: AuditOutcome = .ok, event: AuditEvent? = nil, account: String? = nil,
        detail: String? = nil
    ) {
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

/// The items an operation is about to change, with what they held before, so
/// that a change whose audit entry cannot be written is undone (`audit.onFailure`
/// `fail`). Keeps nothing when the policy would let the change stand anyway.
final class ChangeLog {
    private let isKeeping: Bool
    private var before: [(store: any CredentialBackend, key: ItemKey, item: StoredItem?)] = []
    private let announcer: ((String) throws -> Void)?
    /// Runs once, before the first change in the Secret Service (``Vault/markKeptInSecretService()``).
    private var beforeSecretServiceChange: (() throws -> Void)?

    /// - Parameters:
    ///   - keeping: Whether to keep what changed items held, for ``undo()``.
    ///   - beforeSecretServiceChange: Runs once, before the operation's first change in the Secret Service.
    ///   - announcer: Appends the operation's `<event>.started` entry, when it is audited.
    init(
        keeping: Bool, beforeSecretServiceChange: (() throws -> Void)? = nil,
        announcer: ((String) throws -> Void)? = nil
    ) {
        isKeeping = keeping
        self.beforeSecretServiceChange = beforeSecretServiceChange
        self.announcer = announcer
    }

    /// Records, before a change of many steps begins, what it is about to do
    /// (`<event>.started` with `detail`), so that the trail says so even when the
    /// run is cut short part-way.
    func announce(_ detail: String) throws {
        try announcer?(detail)
    }

    /// Notes what `key` holds in `store` before the operation changes it (the first time only).
    func willChange(_ key: ItemKey, in store: any CredentialBackend) throws {
        try noteChange(in: store)
        guard isKeeping, !before.contains(where: { $0.key == key && $0.store.kind == store.kind }) else { return }
        before.append((store, key, try store.read(key)))
    }

    /// Notes every item of `store` before the operation erases them all.
    func willChangeEverything(in store: any CredentialBackend) throws {
        try noteChange(in: store)
        guard isKeeping else { return }
        for key in try store.list(kind: nil) { try willChange(key, in: store) }
    }

    /// Runs ``beforeSecretServiceChange`` before the first change in the Secret Service.
    private func noteChange(in store: any CredentialBackend) throws {
        guard store.kind == .secretService, let beforeSecretServiceChange else { return }
        try beforeSecretServiceChange()
        self.beforeSecretServiceChange = nil
    }

    /// Puts back what every noted item held, newest change first.
    func undo() throws {
        for (store, key, item) in before.reversed() {
            if let item { try store.write(item, for: key) } else { try store.delete(key) }
        }
    }
}

extension Vault {
    /// The one path of every audited vault operation: the trail is opened and
    /// checked (under its lock), `act` decides (asking the policy) and has the
    /// store act, the trail records what happened, and the caller gets the value.
    ///
    /// Under `audit.onFailure` `fail` nothing changes unaudited: a trail that
    /// cannot be continued (broken, its key gone, its lock timed out, its
    /// directory unwritable) stops the operation before `act` runs, and a change
    /// whose entry then cannot be written is undone. Either error keeps the
    /// audit failure's own code and says whether the change happened. Under
    /// `warn` the change stands and the missing entry is kept for ``auditWarnings``.
    ///
    /// Before the operation's first change in the Secret Service, the namespace is marked
    /// as kept there (``markKeptInSecretService()``), so a later write that lands in the
    /// encrypted file for want of it is known as a move to a weaker store.
    ///
    /// When `act` throws, the failure is recorded (as `unlock.failed` for a
    /// wrong key, `tamper.detected` for altered data, else as `event` failed)
    /// and the operation's own error is rethrown.
    /// - Parameters:
    ///   - event: The operation's audit event.
    ///   - account: The account it concerns, recorded as a pseudonym.
    ///   - detail: A non-secret detail, such as the session's name.
    ///   - act: Decides and acts, noting in the change log what it is about to
    ///     change; returns the value and how to record it.
    /// - Returns: The value `act` returned.
    func perform<Value>(
        _ event: AuditEvent, account: String? = nil, detail: String? = nil,
        _ act: (ChangeLog) throws -> OperationOutcome<Value>
    ) throws -> Value {
        let failClosed = policy.audit.failureMode == .fail
        let mark = { try self.markKeptInSecretService() }
        guard let audit else { return try act(ChangeLog(keeping: false, beforeSecretServiceChange: mark)).value }
        var acted = false
        func appendingOnce() throws -> Value {
            try audit.appending { appender in
                acted = true
                let changes = ChangeLog(keeping: failClosed, beforeSecretServiceChange: mark) { detail in
                    try appender.append(
                        AuditEvent(rawValue: event.rawValue + ".started"), outcome: .ok, backend: self.backend.kind,
                        account: account, detail: detail)
                }
                let result: OperationOutcome<Value>
                do {
                    result = try act(changes)
                } catch let error as LatchkeyError {
                    let failure: AuditEvent =
                        switch error.code {
                        case .wrongKey: .unlockFailed
                        case .tampered: .tamperDetected
                        default: event
                        }
                    // The operation's own error is the one to report.
                    _ = try? appender.append(
                        failure, outcome: .failed(error.code), backend: backend.kind, account: account, detail: detail)
                    throw error
                }
                guard let entry = result.entry else { return result.value }
                let recorded = entry.event ?? event
                do {
                    try appender.append(
                        recorded, outcome: entry.outcome, backend: backend.kind,
                        account: entry.account ?? account, detail: entry.detail ?? detail)
                } catch let error as LatchkeyError {
                    try settle(error, of: recorded, undoing: failClosed ? changes : nil)
                }
                return result.value
            }
        }
        do {
            do {
                return try appendingOnce()
            } catch let error as LatchkeyError where !acted && error.code == .tampered {
                // Nothing has changed yet: a trail the provider broke is repaired, once, and the operation runs.
                guard try repairTrail(before: event) else { throw error }
                return try appendingOnce()
            }
        } catch let error as LatchkeyError where !acted {
            // The trail could not be opened for appending: nothing has changed yet.
            guard !failClosed else {
                throw LatchkeyError(
                    error.code,
                    "the audit trail cannot record \(event) (\(error.message)); nothing was changed (audit.onFailure \"fail\")"
                )
            }
            keepAuditWarning(error, missing: event)
            return try act(ChangeLog(keeping: false, beforeSecretServiceChange: mark)).value
        }
    }

    /// ``perform(_:account:detail:_:)`` under the namespace's commit lock
    /// (``RefreshLock/Kind/commit``), taken before the trail's: a refresh settling, or a
    /// change to sessions that a refresh settling must not cross (a deletion, a plain
    /// session saved). A change whose commit lock stays held past ``Vault/commitDeadline``
    /// is not made.
    func performCommitting<Value>(
        _ event: AuditEvent, account: String? = nil, detail: String? = nil,
        _ act: (ChangeLog) throws -> OperationOutcome<Value>
    ) throws -> Value {
        try withCommitLock { try perform(event, account: account, detail: detail, act) }
    }

    /// Deals with an entry that could not be written after its change was made:
    /// under `fail` undoes the change and throws, saying so; under `warn` keeps the warning.
    private func settle(_ error: LatchkeyError, of event: AuditEvent, undoing changes: ChangeLog?) throws {
        guard let changes else {
            keepAuditWarning(error, missing: event)
            return
        }
        do {
            try changes.undo()
        } catch let undo as LatchkeyError {
            throw LatchkeyError(
                error.code,
                "the \(event) entry could not be written to the audit trail (\(error.message)), and undoing the change failed too (\(undo.message)): the change may have been made"
            )
        }
        throw LatchkeyError(
            error.code,
            "the \(event) entry could not be written to the audit trail (\(error.message)); the change was undone (audit.onFailure \"fail\")"
        )
    }
}
