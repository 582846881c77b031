/// Where the key that opens an encrypted vault comes from.
package enum KeySource: Sendable {
    /// A passphrase, stretched with Argon2id (`crypto_pwhash`). `newVault` says
    /// how a vault created with it picks its parameters; an existing vault is
    /// opened with the parameters in its header.
    case passphrase(SecretBytes, newVault: KDFChoice = .calibrated(target: KDFParameters.defaultTarget))
    /// 32 random bytes in a 0600 key file next to the vault, created on first
    /// use. It protects against copies of the vault alone, not of both files.
    case keyFile

    /// Which kind of key source this is.
    package var kind: Kind {
        switch self {
        case .passphrase: return .passphrase
        case .keyFile: return .keyFile
        }
    }

    /// The kind of a key source, as `latchkey status` reports it.
    package struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The kind's stable name.
        package let rawValue: String

        /// Creates a kind from its stable name.
        /// - Parameter rawValue: The kind's name.
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The kind's stable name.
        package var description: String { rawValue }

        /// A passphrase stretched with Argon2id.
        package static let passphrase = Kind(rawValue: "passphrase")
        /// A random key in a separate key file.
        package static let keyFile = Kind(rawValue: "keyfile")
    }
}
