/// The file beside a trail (`<trail stem>.audit.anchor`, 0600) that holds its
/// anchor: two fixed-size slots written alternately (`pwrite`, then
/// `fdatasync`), so a write torn by a crash leaves the other slot whole.
///
/// A slot (128 bytes): the magic `LKANCHR1`, a write counter, the sequence
/// number and the MAC of the trail's last entry (all integers big-endian), and
/// a tag: keyed BLAKE2b-256 with the trail key over the domain
/// `latchkey.audit.v1 anchor`, a NUL, the app id, a NUL and the slot's first 56
/// bytes; then zero padding. The reader takes the valid slot with the highest
/// counter. Without the trail key nobody can forge a slot; putting back an
/// older copy of the file is detected once the trail has moved two entries past it.
struct AuditAnchorFile {
    /// The file's path.
    let path: String
    /// The namespace, bound into every tag.
    let appID: AppID

    static let slotSize = 128
    private static let magic = Array("LKANCHR1".utf8)
    private static let signedLength = 56

    /// What the file holds.
    enum Contents: Equatable {
        /// There is no anchor file.
        case absent
        /// The file exists but neither slot is valid (emptied, truncated, or forged).
        case invalid
        /// The newest valid slot's anchor and its write counter.
        case anchor(AuditAnchor, counter: UInt64)
    }

    /// Reads both slots and keeps the newest valid one.
    /// - Parameter key: The trail key.
    /// - Returns: What the file holds.
    /// - Throws: `.insecurePermissions` when the file is accessible to others; file errors.
    func read(key: SecretBytes) throws -> Contents {
        let file: POSIX.File
        do {
            file = try POSIX.File.open(path, .read)
        } catch let error as LatchkeyError where error.code == .notFound {
            return .absent
        }
        try PrivateFiles.requirePrivate(file.status(), path: path, directory: false)
        let bytes = try file.read(upTo: 2 * Self.slotSize, at: 0)
        var newest: (AuditAnchor, UInt64)?
        for slot in 0..<2 where bytes.count >= (slot + 1) * Self.slotSize {
            let start = slot * Self.slotSize
            guard let (anchor, counter) = decode(bytes[start..<start + Self.slotSize], key: key) else { continue }
            if newest.map({ counter > $0.1 }) ?? true { newest = (anchor, counter) }
        }
        return newest.map { .anchor($0.0, counter: $0.1) } ?? .invalid
    }

    /// Writes `anchor` into the slot after the one holding `previousCounter`,
    /// durably (`pwrite`, `fdatasync`). Call it while holding the trail's lock.
    /// - Parameters:
    ///   - anchor: The trail's new last sequence number and MAC.
    ///   - previousCounter: The counter of the newest valid slot, or nil when there is none.
    ///   - key: The trail key.
    /// - Returns: The counter written.
    /// - Throws: file errors.
    @discardableResult
    func write(_ anchor: AuditAnchor, after previousCounter: UInt64?, key: SecretBytes) throws -> UInt64 {
        let counter = (previousCounter ?? 0) + 1
        let file = try POSIX.File.open(path, .readWriteCreate(permissions: 0o600))
        try PrivateFiles.requirePrivate(file.status(), path: path, directory: false)
        try file.write(encode(anchor, counter: counter, key: key), at: Int(counter % 2) * Self.slotSize)
        try file.syncData()
        return counter
    }

    private func encode(_ anchor: AuditAnchor, counter: UInt64, key: SecretBytes) -> [UInt8] {
        var slot = Self.magic + Self.bigEndian(counter) + Self.bigEndian(anchor.sequence) + anchor.mac
        slot += tag(slot, key: key)
        return slot + [UInt8](repeating: 0, count: Self.slotSize - slot.count)
    }

    private func decode(_ slot: ArraySlice<UInt8>, key: SecretBytes) -> (AuditAnchor, UInt64)? {
        let bytes = Array(slot)
        guard Array(bytes[0..<8]) == Self.magic else { return nil }
        let signed = Array(bytes[0..<Self.signedLength])
        let stored = Array(bytes[Self.signedLength..<Self.signedLength + 32])
        let expected = tag(signed, key: key)
        let matches = stored.withUnsafeBytes { s in expected.withUnsafeBytes { e in Sodium.constantTimeEqual(s, e) } }
        guard matches else { return nil }
        let counter = Self.integer(bytes[8..<16])
        let anchor = AuditAnchor(sequence: Self.integer(bytes[16..<24]), mac: Array(bytes[24..<56]))
        return (anchor, counter)
    }

    private func tag(_ signed: [UInt8], key: SecretBytes) -> [UInt8] {
        let message = Array("latchkey.audit.v1 anchor".utf8) + [0] + Array(appID.rawValue.utf8) + [0] + signed
        return Sodium.keyedHash(message, key: key, length: 32)
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
