/// Deterministic JSON text for Latchkey's own output: the same value always
/// gives the same bytes. The `latchkey` command writes its `--json` documents with it.
package enum JSONText {
    /// `string` as a JSON string literal: `"` and `\` escaped, `\n`, `\r`, `\t`
    /// as short escapes, every other control character (and DEL) as `\u00XX`,
    /// everything else as its UTF-8 bytes.
    /// - Parameter string: The text.
    /// - Returns: The literal, quotes included.
    package static func quoted(_ string: String) -> String {
        var contiguous = string
        return contiguous.withUTF8 { bytes in
            // Most text needs no escape: then it is copied whole, not scalar by scalar.
            guard bytes.contains(where: needsEscape) else { return "\"" + string + "\"" }
            var out: [UInt8] = [UInt8(ascii: "\"")]
            out.reserveCapacity(bytes.count + 8)
            for byte in bytes {
                if needsEscape(byte), let escape = escape(UInt32(byte)) {
                    out += escape.utf8
                } else {
                    out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Whether a UTF-8 byte of a string needs an escape (``escape(_:)``); no byte of a
    /// multi-byte sequence does.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F
    }

    /// A secret as a JSON string literal, escaped as ``quoted(_:)`` does, in
    /// zeroing memory: for the one output that exists to show a secret.
    /// - Parameter secret: The secret, which must be UTF-8 text.
    /// - Returns: The literal, quotes included.
    /// - Throws: `LatchkeyError` `.invalidInput` when the secret is not UTF-8
    ///   (JSON text cannot carry arbitrary bytes).
    package static func quoted(_ secret: SecretBytes) throws -> SecretBytes {
        try secret.withUnsafeBytes { bytes in
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw LatchkeyError(
                    .invalidInput, "the secret is not UTF-8 text, so JSON cannot carry it; read it without --json")
            }
            let length = bytes.reduce(2) { $0 + (escape(UInt32($1))?.utf8.count ?? 1) }
            return SecretBytes(count: length) { out in
                var offset = 0
                func put(_ byte: UInt8) {
                    out[offset] = byte
                    offset += 1
                }
                put(UInt8(ascii: "\""))
                for byte in bytes {
                    if let escape = escape(UInt32(byte)) {
                        escape.utf8.forEach(put)
                    } else {
                        put(byte)
                    }
                }
                put(UInt8(ascii: "\""))
            }
        }
    }

    /// The escape for a scalar (or, for UTF-8 bytes, a byte: every byte of a
    /// multi-byte sequence is 0x80 or more and needs none), or nil when it stands as is.
    private static func escape(_ value: UInt32) -> String? {
        switch value {
        case 0x22: return "\\\""
        case 0x5C: return "\\\\"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case _ where value < 0x20 || value == 0x7F:
            let hex = String(value, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: return nil
        }
    }
}
