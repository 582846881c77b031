/// The one rule for the text that addresses items: account names and item
/// names are compared, stored and hashed in Unicode Normalization Form C.
///
/// So `é` typed as one code point (U+00E9) and as `e` + U+0301 are the same
/// account in every store (the encrypted file, the Secret Service, an app's
/// own backend), in the audit trail's pseudonyms and on the command line. The
/// text is normalised once, where it enters (``ItemKey/init(kind:account:name:)``
/// and the audit trail's pseudonym); values (tokens, the remembered username)
/// are kept byte for byte.
package enum CanonicalText {
    /// `text` in Normalization Form C (the standard library's `_nfcCodeUnits`,
    /// with a shortcut for ASCII, which is always in NFC).
    /// - Parameter text: An account or item name.
    /// - Returns: The same text, composed.
    package static func nfc(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        return String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }
}
