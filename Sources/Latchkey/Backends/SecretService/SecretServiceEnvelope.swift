#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The secret payload of a Latchkey item in the Secret Service: the value and
/// the metadata that must stay secret with it (account, name, created, expires).
///
/// Version 1, byte by byte (documented in `docs/SECRET-SERVICE.md`):
/// a version byte `0x01`, then five fields, each a 4-byte big-endian length
/// followed by that many bytes: account (UTF-8), name (UTF-8), value (raw bytes),
/// created (8 bytes), expires (0 bytes for "never", or 8 bytes). A time is an
/// IEEE 754 binary64, big-endian: seconds since 2001-01-01T00:00:00Z. Nothing
/// may follow the last field.
struct SecretServiceEnvelope {
    /// The current version byte.
    static let version: UInt8 = 1

    /// The account the item belongs to.
    let account: String
    /// The item's name.
    let name: String
    /// The value and its times.
    let item: StoredItem
    /// The D-Bus path of the item it was read from, when it was read by path (not part of the payload).
    var path: String? = nil

    /// Encodes the envelope into secret memory.
    /// - Returns: The payload to store as the item's secret.
    func encoded() -> SecretBytes {
        let account = Array(self.account.utf8)
        let name = Array(self.name.utf8)
        let created = Self.timeBytes(item.created)
        let expires = item.expires.map(Self.timeBytes) ?? []
        let count = 1 + 5 * 4 + account.count + name.count + item.value.count + created.count + expires.count
        return SecretBytes(count: count) { out in
            var offset = 0
            func append(_ bytes: UnsafeRawBufferPointer) {
                let length = UInt32(bytes.count).bigEndian
                withUnsafeBytes(of: length) {
                    out.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: 4)
                }
                offset += 4
                if let base = bytes.baseAddress {
                    out.baseAddress!.advanced(by: offset).copyMemory(from: base, byteCount: bytes.count)
                }
                offset += bytes.count
            }
            out[0] = Self.version
            offset = 1
            account.withUnsafeBytes(append)
            name.withUnsafeBytes(append)
            item.value.withUnsafeBytes(append)
            created.withUnsafeBytes(append)
            expires.withUnsafeBytes(append)
            precondition(offset == count, "envelope length miscounted")
        }
    }

    /// Decodes the payload of the item at `path`.
    /// - Throws: As ``init(decoding:)``.
    init(decoding payload: SecretBytes, path: String) throws {
        try self.init(decoding: payload)
        self.path = path
    }

    /// Decodes a payload.
    /// - Parameter payload: An item's secret as stored.
    /// - Throws: `LatchkeyError` `.tampered` when the payload is not a well-formed
    ///   envelope of a known version.
    init(decoding payload: SecretBytes) throws {
        self = try payload.withUnsafeBytes { bytes in
            var reader = Reader(bytes: bytes)
            guard try reader.byte() == Self.version else {
                throw Self.malformed("has an unknown version")
            }
            let account = try reader.text()
            let name = try reader.text()
            let value = try reader.field()
            let created = try Self.time(reader.field())
            let expiresField = try reader.field()
            let expires = expiresField.isEmpty ? nil : try Self.time(expiresField)
            guard reader.isAtEnd else { throw Self.malformed("has trailing bytes") }
            return SecretServiceEnvelope(
                account: account, name: name,
                item: StoredItem(value: SecretBytes(value), created: created, expires: expires))
        }
    }

    /// Creates an envelope.
    /// - Parameters:
    ///   - account: The account.
    ///   - name: The item's name.
    ///   - item: The value and its times.
    init(account: String, name: String, item: StoredItem) {
        self.account = account
        self.name = name
        self.item = item
    }

    private static func timeBytes(_ date: Date) -> [UInt8] {
        withUnsafeBytes(of: date.timeIntervalSinceReferenceDate.bitPattern.bigEndian) { Array($0) }
    }

    private static func time(_ field: UnsafeRawBufferPointer) throws -> Date {
        guard field.count == 8 else { throw malformed("has a time that is not 8 bytes") }
        let bits = field.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let seconds = Double(bitPattern: bits)
        guard seconds.isFinite else { throw malformed("has a time that is not a finite number") }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    private static func malformed(_ reason: String) -> LatchkeyError {
        LatchkeyError(.tampered, "a Secret Service item's payload \(reason); it was altered or not written by Latchkey")
    }

    /// Reads length-prefixed fields, refusing any length that runs past the end.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw malformed("is truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func field() throws -> UnsafeRawBufferPointer {
            guard bytes.count - offset >= 4 else { throw malformed("is truncated") }
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard bytes.count - offset >= length else { throw malformed("is truncated") }
            defer { offset += length }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        }

        mutating func text() throws -> String {
            let field = try field()
            guard let text = String(validating: field, as: UTF8.self) else {
                throw malformed("has text that is not UTF-8")
            }
            return text
        }
    }
}
