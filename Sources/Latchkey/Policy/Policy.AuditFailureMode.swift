extension Policy {
    /// What happens when an audit entry cannot be written (`audit.onFailure`).
    public enum AuditFailureMode: String, Sendable, CaseIterable {
        /// The operation fails with the audit error.
        case fail
        /// The operation goes ahead; the app is told (a warning), the record is lost.
        case warn
    }
}
