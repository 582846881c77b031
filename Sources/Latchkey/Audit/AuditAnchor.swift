/// The audit trail's last sequence number and MAC, so that a cut tail is detected.
///
/// Kept in a small file beside the trail (``AuditAnchorFile``), authenticated
/// with the trail key. Trails written before that kept it in the backend
/// (`ItemKey(kind: .anchor, name: "audit.<backend kind>")`) as the UTF-8 text
/// `v1 <sequence> <mac as 64 hex digits>`; such an anchor is still read, and the
/// next append moves it into the file. Sequence 0 with an all-zero MAC is a
/// trail with no entry yet.
struct AuditAnchor: Equatable, Sendable {
    /// The last entry's sequence number; 0 before the first.
    var sequence: UInt64
    /// The last entry's MAC.
    var mac: [UInt8]

    /// The anchor of a trail with no entry.
    static let genesis = AuditAnchor(sequence: 0, mac: AuditEntry.genesisMAC)

    /// Parses an anchor kept in the backend by an earlier version.
    /// - Throws: `.tampered` when it is not one.
    init(decodingLegacy value: SecretBytes) throws {
        let parts = (value.utf8String() ?? "").split(separator: " ")
        guard parts.count == 3, parts[0] == "v1", let sequence = UInt64(parts[1]),
            let mac = Hex.decode(String(parts[2])), mac.count == AuditEntry.macLength
        else {
            throw LatchkeyError(.tampered, "the audit anchor kept in the backend is malformed")
        }
        self.init(sequence: sequence, mac: mac)
    }

    init(sequence: UInt64, mac: [UInt8]) {
        self.sequence = sequence
        self.mac = mac
    }
}
