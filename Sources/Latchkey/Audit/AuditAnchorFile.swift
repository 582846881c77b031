/// The file beside a trail (`audit.<backend kind>.anchor`, 0600, 256 bytes) that holds its
/// anchor: two fixed-size slots written alternately (`pwrite`, then
/// `fdatasync`), so a write torn by a crash leaves the other slot whole.
///
/// A slot (128 bytes): the magic `LKANCHR1`, a write counter, the sequence
/// number and the MAC of the trail's last entry (all integers big-endian), and
/// a tag: keyed BLAKE2b-256 with the trail key over the domain
/// `latchkey.audit.v1 anchor`, a NUL, the app id, a NUL and the slot's first 56
/// bytes; then zero padding. Counter `n` lives in slot `n mod 2`; the file is
/// made with both slots written (counters 0 and 1, no entry), so from then on an
/// invalid slot is never "not written yet": it is torn or altered. The reader
/// takes the valid slot with the highest counter and says what a crash could
/// have left after it (``AuditAnchor/following``). Without the trail key nobody
/// can forge a slot; putting back an older copy of the file is detected once the
/// trail has moved two entries past it.
struct AuditAnchorFile {
    /// The file's path.
    let path: String
    /// The namespace, bound into every tag.
    let appID: AppID

    static let slotSize = 128
    /// The file's length: two slots.
    static let fileLength = 2 * slotSize
    private static let magic = Array("LKANCHR1".utf8)
    private static let signedLength = 56

    /// What the file holds.
    enum Contents: Equatable {
        /// There is no anchor file.
        case absent
        /// The file exists but neither slot is valid (emptied, truncated, longer than
        /// two slots, or forged).
        case invalid
        /// The newest valid slot's anchor (with what may follow it) and its write counter.
        case anchor(AuditAnchor, counter: UInt64)
    }

    /// Reads both slots (a file longer than ``fileLength`` is refused by its size,
    /// before reading) and keeps the newest valid one.
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
        let status = try file.status()
        try PrivateFiles.requirePrivate(status, path: path, directory: false)
        guard status.size <= Self.fileLength else { return .invalid }
        return Self.contents(of: try file.read(upTo: Self.fileLength, at: 0), appID: appID, key: key)
    }

    /// What the bytes of an anchor file hold (pure: the fuzz target's entry point).
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - appID: The namespace, bound into every tag.
    ///   - key: The trail key.
    /// - Returns: `.invalid` or the newest valid slot's anchor, never `.absent`.
    static func contents(of bytes: [UInt8], appID: AppID, key: SecretBytes) -> Contents {
        guard bytes.count <= fileLength else { return .invalid }
        let slots = (0..<2).map { slot -> (AuditAnchor, UInt64)? in
            let start = slot * slotSize
            guard bytes.count >= start + slotSize,
                let (anchor, counter) = decode(bytes[start..<start + slotSize], appID: appID, key: key),
                counter % 2 == UInt64(slot)
            else { return nil }
            return (anchor, counter)
        }
        switch (slots[0], slots[1]) {
        case (let first?, let second?):
            // Two valid slots are always two consecutive writes.
            guard first.1 &+ 1 == second.1 || second.1 &+ 1 == first.1 else { return .invalid }
            let newest = first.1 > second.1 ? first : second
            return .anchor(newest.0, counter: newest.1)
        case (let only?, nil), (nil, let only?):
            var anchor = only.0
            // The other slot was torn by the write after this one: that write named the one entry
            // that follows. Counter 0 is the file's making, torn before its second slot: no entry yet.
            anchor.following = only.1 == 0 ? 0...0 : 1...1
            return .anchor(anchor, counter: only.1)
        case (nil, nil):
            return .invalid
        }
    }

    /// Writes `anchor` into the slot after the one holding `previousCounter`, or
    /// makes the file anew with `anchor` in both slots (counters 0 and 1) when
    /// that is nil, durably (`pwrite`, `fdatasync`). A file that continues is never created:
    /// one gone since its counter was read is `.notFound`. Call it while holding the trail's lock.
    /// - Parameters:
    ///   - anchor: The trail's new last sequence number and MAC.
    ///   - previousCounter: The counter of the newest valid slot, or nil for a new file.
    ///   - key: The trail key.
    /// - Returns: The counter written.
    /// - Throws: file errors.
    @discardableResult
    func write(_ anchor: AuditAnchor, after previousCounter: UInt64?, key: SecretBytes) throws -> UInt64 {
        let file = try POSIX.File.open(path, previousCounter == nil ? .readWriteCreate(permissions: 0o600) : .readWrite)
        try PrivateFiles.requirePrivate(file.status(), path: path, directory: false)
        guard let previousCounter else {
            // A new file: both slots, so that an invalid slot is never one not written yet.
            try file.truncate(to: 0)
            try file.write(encode(anchor, counter: 0, key: key) + encode(anchor, counter: 1, key: key), at: 0)
            try file.syncData()
            return 1
        }
        let counter = previousCounter + 1
        try file.write(encode(anchor, counter: counter, key: key), at: Int(counter % 2) * Self.slotSize)
        try file.syncData()
        return counter
    }

    /// The slot holding `anchor` as write number `counter` (also what the fuzz target signs with).
    func encode(_ anchor: AuditAnchor, counter: UInt64, key: SecretBytes) -> [UInt8] {
        var slot = Self.magic + Self.bigEndian(counter) + Self.bigEndian(anchor.sequence) + anchor.mac
        slot += Self.tag(slot, appID: appID, key: key)
        return slot + [UInt8](repeating: 0, count: Self.slotSize - slot.count)
    }

    private static func decode(_ slot: ArraySlice<UInt8>, appID: AppID, key: SecretBytes) -> (AuditAnchor, UInt64)? {
        let bytes = Array(slot)
        // Byte for byte what the writer writes: the magic first, zeros after the tag.
        guard Array(bytes[0..<8]) == Self.magic, bytes[(signedLength + 32)...].allSatisfy({ $0 == 0 }) else {
            return nil
        }
        let signed = Array(bytes[0..<Self.signedLength])
        let stored = Array(bytes[Self.signedLength..<Self.signedLength + 32])
        let expected = tag(signed, appID: appID, key: key)
        let matches = stored.withUnsafeBytes { s in expected.withUnsafeBytes { e in Sodium.constantTimeEqual(s, e) } }
        guard matches else { return nil }
        let counter = Self.integer(bytes[8..<16])
        let anchor = AuditAnchor(sequence: Self.integer(bytes[16..<24]), mac: Array(bytes[24..<56]))
        return (anchor, counter)
    }

    private static func tag(_ signed: [UInt8], appID: AppID, key: SecretBytes) -> [UInt8] {
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
