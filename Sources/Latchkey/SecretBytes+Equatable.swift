extension SecretBytes: Equatable {
    /// Compares two secrets in constant time for equal lengths (`sodium_memcmp`).
    ///
    /// Secrets of different lengths are unequal; the length itself is not hidden.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in Sodium.constantTimeEqual(l, r) } }
    }
}
