extension BenchmarkProbe {
    /// Looks up a secret stored with one attribute (for example by `secret-tool
    /// store`) through libsecret alone (`secret_password_lookupv_sync`), the
    /// floor an in-process Secret Service read is compared with.
    /// - Parameters:
    ///   - attribute: The attribute's name.
    ///   - value: Its value.
    /// - Returns: Whether a secret was found.
    /// - Throws: `LatchkeyError` when the Secret Service cannot answer.
    package static func libsecretLookup(attribute: String, value: String) throws -> Bool {
        try LibSecret.bareLookup(attribute: attribute, value: value)
    }
}
