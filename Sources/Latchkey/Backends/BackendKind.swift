/// Which kind of store holds an app's credentials.
public struct BackendKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name, as used by the command line and the audit trail.
    public let rawValue: String

    /// Creates a kind from its stable name.
    /// - Parameter rawValue: The kind's name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The kind's stable name.
    public var description: String { rawValue }

    /// The Secret Service (gnome-keyring, KeePassXC, KWallet) through libsecret.
    public static let secretService = BackendKind(rawValue: "secret-service")
    /// Latchkey's libsodium-encrypted vault file.
    public static let file = BackendKind(rawValue: "file")
    /// Memory only: `LatchkeyTesting`'s `InMemoryBackend`. An app's own store
    /// names its own kind with ``init(rawValue:)``.
    package static let memory = BackendKind(rawValue: "memory")
}
