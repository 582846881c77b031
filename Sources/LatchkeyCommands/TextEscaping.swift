/// Makes stored labels (session names, accounts, audit details, paths) safe to
/// print as text: a label with a newline could forge a row of `session list`,
/// and one with ESC could recolour or rewrite the terminal.
package enum TextEscaping {
    /// `text` with every control character escaped, so it prints on one line
    /// and cannot drive the terminal: `\n`, `\r`, `\t`, `\e` (ESC), `\xHH` for the
    /// other C0 and C1 controls and DEL, `\u{HHHH}` for the bidirectional
    /// overrides and isolates (which reorder what is shown), and `\\` for a
    /// backslash, so the escaped form is never ambiguous.
    /// - Parameter text: The label.
    /// - Returns: The label as it is safe to print.
    package static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x1B: out += "\\e"
            case 0x00..<0x20, 0x7F..<0xA0:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" : "") + hex
            case 0x202A...0x202E, 0x2066...0x2069:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
