import Latchkey

/// What the provider keeps of one item besides its secret: not secret (the spec lets a
/// provider store attributes in the clear), kept in memory for searches.
struct ItemInfo {
    var label: String
    var attributes: [String: String]
    var contentType: String
    var created: UInt64
    var modified: UInt64
}

/// One item as stored: a named secret of the provider's vault whose value is this record,
/// encoded as version 1, then the label, the content type, the created and modified times
/// (seconds since 1970, UInt64 big-endian), the number of attributes and each name and value,
/// and last the secret; every string and the secret as a UInt32 big-endian length and its bytes.
/// Encoded and decoded in `SecretBytes`, so the secret is never in memory that is not wiped.
enum ItemRecord {
    private static let version: UInt8 = 1

    /// The record of `info` and `secret`.
    static func encode(_ info: ItemInfo, secret: SecretBytes) -> SecretBytes {
        var writer = RecordWriter(version: version)
        writer.append(info.label)
        writer.append(info.contentType)
        writer.append(info.created)
        writer.append(info.modified)
        writer.append(UInt32(info.attributes.count))
        for (name, value) in info.attributes.sorted(by: { $0.key < $1.key }) {
            writer.append(name)
            writer.append(value)
        }
        return writer.finish(secret: secret)
    }

    /// The info and the secret of a record.
    /// - Throws: `LatchkeyError` `.tampered` for a record that is not one (a vault entry
    ///   another program wrote under the provider's namespace).
    static func decode(_ record: SecretBytes) throws -> (info: ItemInfo, secret: SecretBytes) {
        try record.withUnsafeBytes { bytes in
            var reader = try RecordReader(bytes, version: version, what: "a Secret Service item's record")
            let label = try reader.text()
            let contentType = try reader.text()
            let created = try reader.number64()
            let modified = try reader.number64()
            var attributes: [String: String] = [:]
            for _ in 0..<(try reader.number32()) {
                let name = try reader.text()
                attributes[name] = try reader.text()
            }
            let secret = SecretBytes(try reader.take(Int(try reader.number32())))
            try reader.finish()
            let info = ItemInfo(
                label: label, attributes: attributes, contentType: contentType, created: created, modified: modified)
            return (info, secret)
        }
    }
}
