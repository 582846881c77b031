/// The audit trail's last sequence number and MAC, so that a cut tail is detected.
///
/// Kept in a small file beside the trail (``AuditAnchorFile``), authenticated
/// with the trail key. Sequence 0 with an all-zero MAC is a trail with no entry yet.
struct AuditAnchor: Equatable, Sendable {
    /// The last entry's sequence number; 0 before the first.
    var sequence: UInt64
    /// The last entry's MAC.
    var mac: [UInt8]

    /// The anchor of a trail with no entry.
    static let genesis = AuditAnchor(sequence: 0, mac: AuditEntry.genesisMAC)
}
