/// Deterministic JSON text for Latchkey's own output: the same value always
/// gives the same bytes.
enum JSONText {
    /// `string` as a JSON string literal: `"` and `\` escaped, `\n`, `\r`, `\t`
    /// as short escapes, every other control character (and DEL) as `\u00XX`,
    /// everything else as its UTF-8 bytes.
    static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
