import Latchkey

extension BenchmarkProbe {
    /// Looks up a secret stored with one attribute (for example by `secret-tool
    /// store`) through libsecret alone (``SecretServiceBackend/plainLookup(attribute:value:)``),
    /// the floor an in-process Secret Service read is compared with.
    /// - Parameters:
    ///   - attribute: The attribute's name.
    ///   - value: Its value.
    /// - Returns: Whether a secret was found.
    /// - Throws: `LatchkeyError` when the Secret Service cannot answer.
    static func libsecretLookup(attribute: String, value: String) throws -> Bool {
        try SecretServiceBackend.plainLookup(attribute: attribute, value: value)
    }
}
