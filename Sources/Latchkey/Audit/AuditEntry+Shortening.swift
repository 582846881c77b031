extension AuditEntry {
    /// `detail` within ``maximumDetailLength`` UTF-8 bytes: unchanged when it
    /// fits, else cut at a character boundary and ended with a mark that says
    /// how much was left out (`… [truncated: 1234 more bytes]`). A detail is
    /// shortened, never a reason to drop its entry; counts come first in the
    /// details Latchkey writes (`wiped 14 sessions (...)`), so they survive.
    /// - Parameter detail: The detail as composed.
    /// - Returns: The detail as written.
    static func shortened(_ detail: String) -> String {
        let bytes = Array(detail.utf8)
        guard bytes.count > maximumDetailLength else { return detail }
        // The mark's length depends on the count it names; the longest count is the whole length.
        let room = maximumDetailLength - truncationMark(omitting: bytes.count).utf8.count
        var kept = room
        while kept > 0 && bytes[kept] & 0xC0 == 0x80 { kept -= 1 } // not inside a multi-byte character
        return String(decoding: bytes[..<kept], as: UTF8.self) + truncationMark(omitting: bytes.count - kept)
    }

    /// The mark that ends a shortened detail.
    private static func truncationMark(omitting count: Int) -> String {
        "… [truncated: \(count) more bytes]"
    }
}
