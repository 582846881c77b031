extension SecretServiceBackend {
    /// Looks up a secret stored with one attribute and no schema (for example by
    /// `secret-tool store`) through libsecret alone (`secret_password_lookupv_sync`),
    /// with nothing Latchkey adds: what an in-process Secret Service read is compared
    /// with (`latchkey-bench`). A secret found is freed at once.
    /// - Parameters:
    ///   - attribute: The attribute's name.
    ///   - value: Its value.
    /// - Returns: Whether a secret was found.
    /// - Throws: `LatchkeyError` when the Secret Service cannot answer.
    package static func plainLookup(attribute: String, value: String) throws -> Bool {
        try LibSecret.bareLookup(attribute: attribute, value: value)
    }
}
