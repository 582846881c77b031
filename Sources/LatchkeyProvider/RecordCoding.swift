import Latchkey

/// Writes the fields of a record (``ItemRecord``, ``CollectionsRecord``): numbers big-endian,
/// each string as a UInt32 length and its UTF-8 bytes.
struct RecordWriter {
    private(set) var bytes: [UInt8]

    init(version: UInt8) { bytes = [version] }

    mutating func append(_ number: UInt32) { bytes += withUnsafeBytes(of: number.bigEndian, Array.init) }
    mutating func append(_ number: UInt64) { bytes += withUnsafeBytes(of: number.bigEndian, Array.init) }
    mutating func append(_ text: String) {
        let utf8 = Array(text.utf8)
        append(UInt32(utf8.count))
        bytes += utf8
    }

    /// The record: the fields written, then `secret` (after its length) when given, in `SecretBytes`.
    func finish(secret: SecretBytes? = nil) -> SecretBytes {
        var head = self
        if let secret { head.append(UInt32(secret.count)) }
        let tail = secret ?? SecretBytes()
        return SecretBytes(count: head.bytes.count + tail.count) { out in
            out.copyBytes(from: head.bytes)
            tail.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: out[head.bytes.count...]).copyMemory(from: $0)
            }
        }
    }
}

/// Reads what a ``RecordWriter`` wrote; every read past the end throws `.tampered`.
struct RecordReader {
    private let bytes: UnsafeRawBufferPointer
    private let what: String
    private var offset = 1

    /// - Throws: `LatchkeyError` `.tampered` when the record does not start with `version`.
    init(_ bytes: UnsafeRawBufferPointer, version: UInt8, what: String) throws {
        self.bytes = bytes
        self.what = what
        guard bytes.first == version else { throw LatchkeyError(.tampered, "\(what) has an unknown version") }
    }

    mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, bytes.count - offset >= count else { throw LatchkeyError(.tampered, "\(what) is cut short") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func number32() throws -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func number64() throws -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func text() throws -> String {
        let count = Int(try number32())
        guard let text = String(validating: try take(count), as: UTF8.self) else {
            throw LatchkeyError(.tampered, "\(what) holds text that is not UTF-8")
        }
        return text
    }

    /// Throws unless every byte was read.
    func finish() throws {
        guard offset == bytes.count else { throw LatchkeyError(.tampered, "\(what) has bytes after its end") }
    }
}

/// The provider's collections and aliases, one named secret `collections` of its vault:
/// version 1, the number of collections and each id, label, created and modified time, then
/// the number of aliases and each alias and collection id.
enum CollectionsRecord {
    private static let version: UInt8 = 1

    static func encode(_ collections: [StoredCollection], aliases: [String: String]) -> SecretBytes {
        var writer = RecordWriter(version: version)
        writer.append(UInt32(collections.count))
        for collection in collections.sorted(by: { $0.id < $1.id }) {
            writer.append(collection.id)
            writer.append(collection.label)
            writer.append(collection.created)
            writer.append(collection.modified)
        }
        writer.append(UInt32(aliases.count))
        for (alias, id) in aliases.sorted(by: { $0.key < $1.key }) {
            writer.append(alias)
            writer.append(id)
        }
        return writer.finish()
    }

    static func decode(_ record: SecretBytes) throws -> ([String: StoredCollection], [String: String]) {
        try record.withUnsafeBytes { bytes in
            var reader = try RecordReader(bytes, version: version, what: "the Secret Service collections' record")
            var collections: [String: StoredCollection] = [:]
            for _ in 0..<(try reader.number32()) {
                let id = try reader.text()
                collections[id] = StoredCollection(
                    id: id, label: try reader.text(), created: try reader.number64(), modified: try reader.number64(),
                    persistent: true)
            }
            var aliases: [String: String] = [:]
            for _ in 0..<(try reader.number32()) {
                let alias = try reader.text()
                aliases[alias] = try reader.text()
            }
            try reader.finish()
            return (collections, aliases)
        }
    }
}
