/// What ``Vault/verifyAudit()-2gsuw`` found in one audit trail.
public enum AuditVerification: Sendable, Equatable, Codable {
    /// Every entry is authentic and in order, nothing is missing at the start
    /// (beyond a checkpoint), and the end matches the anchor kept in the backend.
    /// - Parameters:
    ///   - entryCount: The number of lines, a checkpoint included.
    ///   - lastSequence: The last entry's sequence number (0 for an empty trail).
    case intact(entryCount: Int, lastSequence: UInt64)
    /// The trail was altered.
    /// - Parameters:
    ///   - sequence: The first sequence number that is bad, missing or cannot be vouched for.
    ///   - reason: What is wrong, in plain words (line number included where there is one).
    case broken(sequence: UInt64, reason: String)

    /// Whether the trail verified.
    public var isIntact: Bool {
        if case .intact = self { return true }
        return false
    }
}
