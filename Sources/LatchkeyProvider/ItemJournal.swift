import Latchkey

/// The provider's items: one file beside its vault, `secret-service.journal` in the namespace's
/// directory (0600), a log of sealed records that only grows by appends, so a change costs one
/// append and one `fsync` however many items there are (docs/FILE-FORMAT.md).
///
/// The file starts with the magic `LKSSJNL1` and a random 16-byte id. Each record follows as a
/// UInt32 big-endian length, a 24-byte nonce and the XChaCha20-Poly1305 ciphertext (the library's
/// ``Sodium`` helper) of the change, under a random key kept as the vault's named secret
/// `journal-key`, with the magic, the file's id and the record's number (UInt64 big-endian,
/// from 0) as additional data: a record moved within the file or into another one does not open.
/// A change is a ``RecordWriter`` record of version 1: the operation (UInt32, 1 put or 2
/// delete), the collection's id and the item's, and for a put the item's ``ItemRecord``.
///
/// A record cut short or unreadable at the end of the file is a write a crash interrupted
/// before its `fsync` returned (never acknowledged): it is cut off when the file is read. One
/// that does not open before other records is `.tampered`. When most records are stale,
/// ``compact(_:)`` replaces the file with one of the live records only, atomically and durably
/// (the library's `PrivateFiles.replace`: a temporary file synced and renamed over it): a crash
/// leaves the old file or the new one, each whole.
/// Used on the provider's thread only.
final class ItemJournal {
    /// Where an item's last record is in the file.
    struct Location: Equatable {
        /// The record's offset in the file (at its length field) and its length with that field.
        let offset: Int
        let length: Int
        /// The record's number in the file (its additional data).
        let number: UInt64
    }

    /// A record read back: an item's new record (its ``ItemRecord``) or its deletion.
    enum Change {
        case put(ItemRef, SecretBytes)
        case delete(ItemRef)
    }

    /// The journal's name in the namespace's directory.
    static let fileName = "secret-service.journal"
    /// The length of the journal's key (the vault's named secret `journal-key`).
    static let keyLength = Sodium.aeadKeyLength
    /// The most bytes the journal holds, and one record.
    static let maximumFileLength = 4 << 30
    static let maximumRecordLength = 16 << 20

    private static let magic = Array("LKSSJNL1".utf8)
    private static let idLength = 16
    private static let headerLength = magic.count + idLength
    private static let nonceLength = 24
    private static let version: UInt8 = 1

    /// The journal's path.
    let path: String
    private let key: SecretBytes
    private var file: POSIX.File
    private var id: [UInt8]
    /// The file's length, and the number of records in it.
    private(set) var length: Int
    private(set) var count: UInt64 = 0

    /// Opens the journal at `path` under `key`, creating it when there is none, and hands each
    /// record, in order, to `replay`, with where it is. What a compaction a crash interrupted
    /// left (its temporary file, never renamed) is removed; a record a crash cut short at the
    /// end is cut off.
    /// - Throws: `LatchkeyError` `.tampered` for a file that is not a journal or a record that
    ///   does not open before the last; `.insecurePermissions`; `.io`.
    init(path: String, key: SecretBytes, replay: (Change, Location) throws -> Void) throws {
        self.path = path
        self.key = key
        try PrivateFiles.removeLeftovers(of: path)
        if try PrivateFiles.requirePrivate(path, directory: false) == nil {
            try Self.createFile(path, id: Sodium.randomBytes(count: Self.idLength), records: [])
        }
        file = try POSIX.File.open(path, .readAppendCreate(permissions: 0o600))
        let bytes = try file.readAll(limit: Self.maximumFileLength, what: "the Secret Service provider's journal")
        guard bytes.count >= Self.headerLength, Array(bytes[..<Self.magic.count]) == Self.magic else {
            throw LatchkeyError(.tampered, "\(path) is not a Latchkey Secret Service journal")
        }
        id = Array(bytes[Self.magic.count..<Self.headerLength])
        var offset = Self.headerLength
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { break }
            let bodyLength = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard bodyLength <= Self.maximumRecordLength, bytes.count - offset - 4 >= bodyLength else { break }
            let location = Location(offset: offset, length: 4 + bodyLength, number: count)
            guard let change = Self.open(bytes[offset + 4..<offset + 4 + bodyLength], location, id: id, key: key)
            else {
                guard offset + 4 + bodyLength == bytes.count else {
                    throw LatchkeyError(.tampered, "\(path) holds a record that does not open (record \(count))")
                }
                break
            }
            try replay(change, location)
            offset += location.length
            count += 1
        }
        length = offset
        if offset < bytes.count {
            // A write a crash cut short, never acknowledged: cut off, so the next append follows the last record.
            try file.truncate(to: offset)
            try file.sync()
        }
    }

    /// Appends `change` and syncs it to the disk: it is durable when this returns.
    /// - Returns: Where the record is.
    /// - Throws: `LatchkeyError` `.io` (the file is as before then); `.invalidInput` for a record over the limit.
    @discardableResult
    func append(_ change: Change) throws -> Location {
        let record = try Self.seal(change, number: count, id: id, key: key)
        let location = Location(offset: length, length: record.count, number: count)
        do {
            try file.writeAll(record)
            try file.sync()
        } catch {
            try? file.truncate(to: length)
            throw error
        }
        length += record.count
        count += 1
        return location
    }

    /// Takes back the last record appended, at `location` (its change could not be audited).
    func removeLast(_ location: Location) throws {
        guard location.offset + location.length == length, location.number + 1 == count else {
            throw LatchkeyError(.internal, "only the last record of \(path) can be taken back")
        }
        try file.truncate(to: location.offset)
        try file.sync()
        length = location.offset
        count -= 1
    }

    /// The item record of the put at `location`.
    /// - Throws: `LatchkeyError` `.tampered` when the record there does not open or is no put of `ref`.
    func record(at location: Location, of ref: ItemRef) throws -> SecretBytes {
        let bytes = try file.read(upTo: location.length, at: location.offset)
        guard bytes.count == location.length,
            case .put(let found, let record)? = Self.open(bytes[4...], location, id: id, key: key), found == ref
        else {
            throw LatchkeyError(.tampered, "\(path) does not hold the record it held (record \(location.number))")
        }
        return record
    }

    /// Replaces the journal with one holding the records of `live` (items and where their last
    /// records are), and nothing else, under a new id.
    /// - Returns: Where each item's record is in the new file.
    /// - Throws: `LatchkeyError`; the journal is as before then.
    func compact(_ live: [(ref: ItemRef, location: Location)]) throws -> [ItemRef: Location] {
        let newID = Sodium.randomBytes(count: Self.idLength)
        var records: [[UInt8]] = []
        var locations: [ItemRef: Location] = [:]
        var offset = Self.headerLength
        for (number, (ref, location)) in live.sorted(by: { $0.location.offset < $1.location.offset }).enumerated() {
            let sealed = try Self.seal(
                .put(ref, record(at: location, of: ref)), number: UInt64(number), id: newID, key: key)
            locations[ref] = Location(offset: offset, length: sealed.count, number: UInt64(number))
            offset += sealed.count
            records.append(sealed)
        }
        try Self.createFile(path, id: newID, records: records)
        file = try POSIX.File.open(path, .readAppendCreate(permissions: 0o600))
        id = newID
        length = offset
        count = UInt64(records.count)
        return locations
    }

    /// Replaces `path`, atomically and durably, with a journal of `records` under `id`.
    private static func createFile(_ path: String, id: [UInt8], records: [[UInt8]]) throws {
        var bytes = magic + id
        bytes.reserveCapacity(records.reduce(bytes.count) { $0 + $1.count })
        for record in records { bytes += record }
        try PrivateFiles.replace(path, with: bytes)
    }

    private static func additionalData(id: [UInt8], number: UInt64) -> [UInt8] {
        magic + id + withUnsafeBytes(of: number.bigEndian, Array.init)
    }

    /// The record of `change`: its length, nonce and ciphertext.
    private static func seal(_ change: Change, number: UInt64, id: [UInt8], key: SecretBytes) throws -> [UInt8] {
        var writer = RecordWriter(version: version)
        let plaintext: SecretBytes
        switch change {
        case .put(let ref, let record):
            writer.append(UInt32(1))
            writer.append(ref.collection)
            writer.append(ref.item)
            plaintext = writer.finish(secret: record)
        case .delete(let ref):
            writer.append(UInt32(2))
            writer.append(ref.collection)
            writer.append(ref.item)
            plaintext = writer.finish()
        }
        let (nonce, ciphertext) = Sodium.seal(
            plaintext, additionalData: additionalData(id: id, number: number), key: key)
        let bodyLength = nonce.count + ciphertext.count
        guard bodyLength <= maximumRecordLength else {
            throw LatchkeyError(.invalidInput, "an item's record is at most \(maximumRecordLength) bytes")
        }
        return withUnsafeBytes(of: UInt32(bodyLength).bigEndian, Array.init) + nonce + ciphertext
    }

    /// The change in a record's body (its nonce and ciphertext); nil when it does not open.
    private static func open(_ body: ArraySlice<UInt8>, _ location: Location, id: [UInt8], key: SecretBytes)
        -> Change?
    {
        guard body.count > nonceLength,
            let plaintext = Sodium.open(
                body.dropFirst(nonceLength), nonce: body.prefix(nonceLength),
                additionalData: additionalData(id: id, number: location.number)[...], key: key)
        else { return nil }
        return try? plaintext.withUnsafeBytes { bytes -> Change in
            var reader = try RecordReader(bytes, version: version, what: "a Secret Service journal record")
            let operation = try reader.number32()
            let ref = ItemRef(collection: try reader.text(), item: try reader.text())
            switch operation {
            case 1:
                let record = SecretBytes(try reader.take(Int(try reader.number32())))
                try reader.finish()
                return .put(ref, record)
            case 2:
                try reader.finish()
                return .delete(ref)
            default:
                throw LatchkeyError(.tampered, "a Secret Service journal record has an unknown operation")
            }
        }
    }
}
