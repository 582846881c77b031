// The line format and the canonical bytes the MAC covers; both are specified in
// docs/AUDIT-TRAIL.md, and a change to either is a format change.

extension AuditEntry {
    /// The keys of a line, in the order they are written.
    static let lineKeys = [
        "seq", "time", "event", "outcome", "error", "backend", "account", "detail", "continuesFrom", "mac",
    ]

    /// The entry as one JSON line (without the newline): keys in ``lineKeys``
    /// order, absent optional keys left out, no spaces.
    var jsonLine: String {
        var fields = [
            "\"seq\":\(sequence)", "\"time\":" + JSONText.quoted(timeText),
            "\"event\":" + JSONText.quoted(event.rawValue), "\"outcome\":" + JSONText.quoted(outcome.name),
        ]
        if let code = outcome.errorCode { fields.append("\"error\":" + JSONText.quoted(code.rawValue)) }
        fields.append("\"backend\":" + JSONText.quoted(backend.rawValue))
        if let account { fields.append("\"account\":" + JSONText.quoted(account)) }
        if let detail { fields.append("\"detail\":" + JSONText.quoted(detail)) }
        if let continuesFrom { fields.append("\"continuesFrom\":" + JSONText.quoted(continuesFrom)) }
        fields.append("\"mac\":" + JSONText.quoted(mac))
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Parses one line and checks that it is exactly the line Latchkey writes
    /// for the entry (so no byte outside the MAC'd fields can change unseen).
    /// - Parameters:
    ///   - line: The line's bytes, without the newline.
    ///   - source: Names the line in errors (`<path> line 7`).
    /// - Throws: `.tampered` naming `source` and what is wrong.
    init(line: some Collection<UInt8>, source: String) throws {
        do {
            let reader = try JSONObjectReader(
                JSONValue.parse(line, source: source), path: "", source: source, allowedKeys: AuditEntry.lineKeys)
            guard case .integer(let sequence) = try reader.required("seq"), sequence >= 0 else {
                throw reader.error("seq", "must be a non-negative integer")
            }
            guard case .string(let timeText) = try reader.required("time"),
                let milliseconds = UTCTimestamp.parse(timeText)
            else {
                throw reader.error("time", "must be a UTC time such as 2025-06-01T12:34:56.789Z")
            }
            guard case .string(let event) = try reader.required("event"), AuditEvent(rawValue: event).isWellFormed
            else {
                throw reader.error("event", "must be an event name such as session.saved")
            }
            guard case .string(let outcomeName) = try reader.required("outcome"),
                let outcome = AuditOutcome(name: outcomeName, errorCode: try reader.string("error"))
            else {
                throw reader.error("outcome", "must be ok, skipped, denied, or failed with an error code")
            }
            guard case .string(let backend) = try reader.required("backend"), !backend.isEmpty else {
                throw reader.error("backend", "must be a backend name")
            }
            let account = try reader.string("account")
            guard account.map({ Hex.decode($0)?.count == AuditTrail.pseudonymLength }) ?? true else {
                throw reader.error("account", "must be a pseudonym of \(AuditTrail.pseudonymLength * 2) hex digits")
            }
            let continuesFrom = try reader.string("continuesFrom")
            guard continuesFrom.map({ Hex.decode($0)?.count == AuditEntry.macLength }) ?? true else {
                throw reader.error("continuesFrom", "must be a MAC of \(AuditEntry.macLength * 2) hex digits")
            }
            guard case .string(let mac) = try reader.required("mac"), Hex.decode(mac)?.count == AuditEntry.macLength
            else {
                throw reader.error("mac", "must be a MAC of \(AuditEntry.macLength * 2) hex digits")
            }
            self.init(
                sequence: UInt64(sequence), milliseconds: milliseconds, event: AuditEvent(rawValue: event),
                outcome: outcome, backend: BackendKind(rawValue: backend), account: account,
                detail: try reader.string("detail"), continuesFrom: continuesFrom, mac: mac)
        } catch let error as LatchkeyError {
            throw LatchkeyError(.tampered, error.message)
        }
        guard Array(jsonLine.utf8).elementsEqual(line) else {
            throw LatchkeyError(.tampered, "\(source): not in the canonical form Latchkey writes")
        }
    }

    /// What starts a line in the form Latchkey writes (`{"seq":N,"time":"...","event":"..."`),
    /// read without parsing or checking the rest: enough to judge whether a trail needs
    /// trimming, which then verifies every line it keeps.
    /// - Parameter line: The line's bytes.
    /// - Returns: The sequence number, the time in milliseconds and whether the entry is a
    ///   checkpoint; nil when the line does not start that way.
    static func head(of line: some Collection<UInt8>) -> (sequence: UInt64, milliseconds: Int64, isCheckpoint: Bool)? {
        var rest = line.prefix(128)[...]
        func take(_ text: String) -> Bool {
            guard rest.starts(with: text.utf8) else { return false }
            rest = rest.dropFirst(text.utf8.count)
            return true
        }
        guard take("{\"seq\":") else { return nil }
        let digits = rest.prefix { (48...57).contains($0) }
        guard (1...20).contains(digits.count), let sequence = UInt64(String(decoding: digits, as: UTF8.self)) else {
            return nil
        }
        rest = rest.dropFirst(digits.count)
        guard take(",\"time\":\""),
            let milliseconds = UTCTimestamp.parse(String(decoding: rest.prefix(24), as: UTF8.self))
        else { return nil }
        rest = rest.dropFirst(24)
        guard take("\",\"event\":\"") else { return nil }
        return (sequence, milliseconds, take(AuditEvent.checkpoint.rawValue + "\""))
    }

    /// The MAC that ends a line in the form Latchkey writes (`,"mac":"<64 hex digits>"}`),
    /// read without parsing the rest.
    /// - Parameter line: The line's bytes.
    /// - Returns: The MAC, or nil when the line does not end that way.
    static func trailingMAC(of line: some Collection<UInt8>) -> [UInt8]? {
        let field = Array(",\"mac\":\"".utf8)
        let end = line.suffix(field.count + macLength * 2 + 2)
        guard end.count == field.count + macLength * 2 + 2, end.starts(with: field),
            end.suffix(2).elementsEqual("\"}".utf8)
        else { return nil }
        return Hex.decode(String(decoding: end.dropFirst(field.count).dropLast(2), as: UTF8.self))
    }

    /// The bytes the MAC covers (see docs/AUDIT-TRAIL.md): the tag
    /// `latchkey.audit.v1 entry`, a zero byte, then each field in a fixed order
    /// as a presence byte (0 absent, 1 present) followed, when present, by its
    /// UTF-8 length as 4 big-endian bytes and its UTF-8 bytes.
    func canonicalBytes(appID: AppID) -> [UInt8] {
        var out = Array("latchkey.audit.v1 entry".utf8) + [0]
        let fields: [String?] = [
            appID.rawValue, String(sequence), timeText, event.rawValue, outcome.name, outcome.errorCode?.rawValue,
            backend.rawValue, account, detail, continuesFrom,
        ]
        for field in fields {
            guard let field else {
                out.append(0)
                continue
            }
            let bytes = Array(field.utf8)
            let length = UInt32(bytes.count)
            out += [
                1, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            ]
            out += bytes
        }
        return out
    }

    /// The MAC of this entry's content chained to `previous`: keyed BLAKE2b-256
    /// of the tag `latchkey.audit.v1 mac`, a zero byte, the previous MAC and the
    /// canonical bytes.
    func computeMAC(previous: [UInt8], key: SecretBytes, appID: AppID) -> [UInt8] {
        Sodium.keyedHash(Array("latchkey.audit.v1 mac".utf8) + [0] + previous + canonicalBytes(appID: appID), key: key)
    }
}
