/// The audit trail's last sequence number and MAC, so that a cut tail is detected.
///
/// Kept in a small file beside the trail (``AuditAnchorFile``), authenticated
/// with the trail key. Sequence 0 with an all-zero MAC is a trail with no entry yet.
struct AuditAnchor: Equatable, Sendable {
    /// The last entry's sequence number; 0 before the first.
    var sequence: UInt64
    /// The last entry's MAC.
    var mac: [UInt8]
    /// How many entries may follow the anchored one, as the state of the anchor
    /// file a crash can leave says (``AuditAnchorFile/read(key:)``): none or one
    /// when both slots are valid (a crash between an append and its anchor
    /// write); exactly one when the other slot is torn (the crash tore the write
    /// naming that entry); none when only the file's first slot, written when it
    /// was made, is valid (the crash tore the making of the file).
    var following: ClosedRange<UInt64> = 0...1

    /// The anchor of a trail with no entry.
    static let genesis = AuditAnchor(sequence: 0, mac: AuditEntry.genesisMAC)
}
