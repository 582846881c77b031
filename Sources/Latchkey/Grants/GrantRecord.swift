#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a grant is kept: the value of one `session` item, so both stores write
/// it whole in one step (`docs/FILE-FORMAT.md`, "Grants"). It begins with a
/// marker no plain session may begin with (``Vault/saveSession(_:name:account:expires:)``
/// refuses one), so reading a session tells a grant from a token.
enum GrantRecord {
    /// Byte 0, ASCII `latchkey.grant`, then the record's version (1).
    static let marker: [UInt8] = [0] + Array("latchkey.grant".utf8) + [1]

    /// Whether `value` is a grant record (begins with the marker).
    static func isGrant(_ value: SecretBytes) -> Bool {
        value.withUnsafeBytes { $0.count >= marker.count && $0.prefix(marker.count).elementsEqual(marker) }
    }

    /// The record of `grant`, built in zeroing memory.
    static func encode(_ grant: Grant) -> SecretBytes {
        let type = Array(grant.tokenType.utf8)
        let scope = grant.scope.map { Array($0.utf8) }
        let count =
            marker.count + 4 + grant.accessToken.count + 9 + 1 + (grant.refreshToken.map { 4 + $0.count } ?? 0) + 9
            + 2 + type.count + 1 + (scope.map { 4 + $0.count } ?? 0)
        return SecretBytes(count: count) { out in
            var writer = ByteWriter(out)
            marker.withUnsafeBytes { writer.write($0) }
            grant.accessToken.withUnsafeBytes { token in
                writer.write(UInt32(token.count))
                writer.write(token)
            }
            write(grant.accessTokenExpires, to: &writer)
            writer.write(UInt8(grant.refreshToken == nil ? 0 : 1))
            grant.refreshToken?.withUnsafeBytes { token in
                writer.write(UInt32(token.count))
                writer.write(token)
            }
            write(grant.refreshTokenExpires, to: &writer)
            writer.write(UInt16(type.count))
            type.withUnsafeBytes { writer.write($0) }
            writer.write(UInt8(scope == nil ? 0 : 1))
            if let scope {
                writer.write(UInt32(scope.count))
                scope.withUnsafeBytes { writer.write($0) }
            }
        }
    }

    /// The grant `value` records.
    /// - Throws: `LatchkeyError` `.tampered` when it begins with the marker but is not a whole record.
    static func decode(_ value: SecretBytes) throws -> Grant {
        let grant: Grant? = value.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes, at: 0)
            guard cursor.take(marker.count) != nil, let access = secret(&cursor),
                let accessExpires = date(&cursor), let hasRefresh = cursor.uint8(), hasRefresh <= 1
            else { return nil }
            let refresh = hasRefresh == 1 ? secret(&cursor) : nil
            guard hasRefresh == 0 || refresh != nil, let refreshExpires = date(&cursor),
                let typeLength = cursor.uint16(), let typeBytes = cursor.take(Int(typeLength)),
                let type = String(validating: typeBytes.bindMemory(to: UInt8.self), as: UTF8.self),
                let hasScope = cursor.uint8(), hasScope <= 1
            else { return nil }
            var scope: String?
            if hasScope == 1 {
                guard let length = cursor.uint32(), let scopeBytes = cursor.take(Int(length)),
                    let text = String(validating: scopeBytes.bindMemory(to: UInt8.self), as: UTF8.self)
                else { return nil }
                scope = text
            }
            guard cursor.remaining == 0 else { return nil }
            return Grant(
                accessToken: access, accessTokenExpires: accessExpires.value, refreshToken: refresh,
                refreshTokenExpires: refreshExpires.value, tokenType: type, scope: scope)
        }
        guard let grant else { throw LatchkeyError(.tampered, "a stored grant is damaged (its record is incomplete)") }
        return grant
    }

    private static func write(_ date: Date?, to writer: inout ByteWriter) {
        writer.write(UInt8(date == nil ? 0 : 1))
        writer.write(date?.timeIntervalSinceReferenceDate.bitPattern ?? 0)
    }

    /// A length-prefixed secret, copied into zeroing memory.
    private static func secret(_ cursor: inout ByteCursor) -> SecretBytes? {
        guard let length = cursor.uint32(), let bytes = cursor.take(Int(length)) else { return nil }
        return SecretBytes(count: bytes.count) { $0.copyMemory(from: bytes) }
    }

    /// An optional date: a flag byte, then the bits of a binary64 (0 when absent).
    private struct OptionalDate { var value: Date? }

    private static func date(_ cursor: inout ByteCursor) -> OptionalDate? {
        guard let flag = cursor.uint8(), flag <= 1, let bits = cursor.uint64() else { return nil }
        guard flag == 1 else { return bits == 0 ? OptionalDate(value: nil) : nil }
        let seconds = Double(bitPattern: bits)
        guard seconds.isFinite else { return nil }
        return OptionalDate(value: Date(timeIntervalSinceReferenceDate: seconds))
    }
}
