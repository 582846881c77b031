extension Policy {
    /// How the audit trail is kept (`audit`).
    public struct AuditRules: Sendable, Equatable {
        /// Whether events are recorded at all (`audit.enabled`).
        public internal(set) var isEnabled: Bool
        /// How much of the trail is kept (`audit.maxEntries`, `audit.maxAgeDays`).
        public internal(set) var retention: AuditRetention
        /// What a failed audit write does to the operation (`audit.onFailure`).
        public internal(set) var failureMode: AuditFailureMode

        /// Creates audit rules.
        /// - Parameters:
        ///   - isEnabled: Whether events are recorded.
        ///   - retention: How much of the trail is kept.
        ///   - failureMode: What a failed audit write does to the operation.
        public init(isEnabled: Bool, retention: AuditRetention, failureMode: AuditFailureMode) {
            self.isEnabled = isEnabled
            self.retention = retention
            self.failureMode = failureMode
        }
    }
}
