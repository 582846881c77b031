#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One line of the audit trail. It holds no secret: the account appears only
/// as a keyed pseudonym, and the detail is non-secret text chosen by the caller.
public struct AuditEntry: Sendable, Equatable, Codable {
    /// The entry's position in the trail, from 1 with no gap.
    public let sequence: UInt64
    /// When it was recorded, in whole milliseconds since 1970 (UTC).
    let milliseconds: Int64
    /// What happened.
    public let event: AuditEvent
    /// How it ended.
    public let outcome: AuditOutcome
    /// The store involved.
    public let backend: BackendKind
    /// The account's keyed pseudonym (16 hex digits), if the event concerns an account.
    public let account: String?
    /// Non-secret detail, such as what a logout wiped.
    public let detail: String?
    /// For an `audit.checkpoint` only: the MAC (hex) that the next entry continues from.
    public let continuesFrom: String?
    /// The entry's MAC (hex): keyed BLAKE2b over the previous MAC and this entry's canonical bytes.
    public let mac: String

    /// When it was recorded.
    public var time: Date { Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1_000) }

    /// The time as written in the trail, such as `2025-06-01T12:34:56.789Z`.
    public var timeText: String { UTCTimestamp.format(milliseconds: milliseconds) }

    /// The length of a MAC in bytes.
    static let macLength = 32
    /// The MAC the first entry of a trail continues from.
    static let genesisMAC = [UInt8](repeating: 0, count: macLength)
    /// The most UTF-8 bytes a detail may have.
    static let maximumDetailLength = 512

    init(
        sequence: UInt64, milliseconds: Int64, event: AuditEvent, outcome: AuditOutcome, backend: BackendKind,
        account: String?, detail: String?, continuesFrom: String?, mac: String
    ) {
        self.sequence = sequence
        self.milliseconds = milliseconds
        self.event = event
        self.outcome = outcome
        self.backend = backend
        self.account = account
        self.detail = detail
        self.continuesFrom = continuesFrom
        self.mac = mac
    }

    /// This entry with `mac` as its MAC.
    func withMAC(_ mac: [UInt8]) -> AuditEntry {
        AuditEntry(
            sequence: sequence, milliseconds: milliseconds, event: event, outcome: outcome, backend: backend,
            account: account, detail: detail, continuesFrom: continuesFrom, mac: Hex.encode(mac))
    }

    /// The MAC the next entry's chain starts from: ``continuesFrom`` for a
    /// checkpoint, ``mac`` for every other entry.
    var chainValue: [UInt8] {
        Hex.decode(continuesFrom ?? mac) ?? AuditEntry.genesisMAC
    }
}

extension AuditEntry {
    /// The entry that follows `last` in a trail of `appID`, with its MAC under `key`:
    /// the account as its keyed pseudonym, a long detail shortened (with a mark saying so).
    /// - Throws: `.invalidInput` for a malformed event name.
    static func chained(
        _ event: AuditEvent, outcome: AuditOutcome, backend: BackendKind, account: String?, detail: String?,
        after last: (sequence: UInt64, chainValue: [UInt8]), at time: Date, key: SecretBytes, appID: AppID
    ) throws -> AuditEntry {
        guard event.isWellFormed else {
            throw LatchkeyError(
                .invalidInput, "audit event name '\(event.rawValue)' is not lower-case words joined by dots")
        }
        // A long detail is shortened (with a mark saying so), never a reason to lose the entry.
        let unsigned = AuditEntry(
            sequence: last.sequence + 1, milliseconds: AuditTrail.milliseconds(time), event: event, outcome: outcome,
            backend: backend, account: account.map { AuditTrail.pseudonym(for: $0, key: key, appID: appID) },
            detail: detail.map(AuditEntry.shortened), continuesFrom: nil, mac: "")
        return unsigned.withMAC(unsigned.computeMAC(previous: last.chainValue, key: key, appID: appID))
    }
}
