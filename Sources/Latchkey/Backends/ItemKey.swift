/// The address of one item inside an app namespace: its kind, the account it
/// belongs to, and its name.
///
/// The account may be empty for items that belong to the app rather than to an
/// account (the remembered username, settings, internal keys).
public struct ItemKey: Hashable, Sendable, CustomStringConvertible {
    /// What sort of item this is.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The kind's stable name, as stored by the backends.
        public let rawValue: String

        /// Creates a kind from its stable name.
        /// - Parameter rawValue: The kind's name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The kind's stable name.
        public var description: String { rawValue }

        /// The remembered username.
        public static let username = Kind(rawValue: "username")
        /// A session token or cookie.
        public static let session = Kind(rawValue: "session")
        /// A named secret of the app, such as an API key, a client secret or a
        /// certificate's password: app-wide (its account is empty), kept by the
        /// policy's `secrets` section rather than the session cap.
        public static let secret = Kind(rawValue: "secret")
        /// A user setting kept by Latchkey, such as the username opt-out. A
        /// `CredentialBackend` stores it like any other item.
        public static let setting = Kind(rawValue: "setting")
        /// A key Latchkey keeps for itself (the audit chain's MAC and pseudonym
        /// key). A `CredentialBackend` stores it like any other item, as a secret.
        public static let key = Kind(rawValue: "key")
    }

    /// What sort of item this is.
    public let kind: Kind
    /// The account the item belongs to, in Unicode NFC; empty for app-wide items.
    public let account: String
    /// The item's name within its kind and account, such as `access`, in Unicode NFC.
    public let name: String

    /// Creates an item key. The account and the name are normalised to Unicode
    /// Normalization Form C, so the two spellings of `é` address one item in every store.
    /// - Parameters:
    ///   - kind: What sort of item this is.
    ///   - account: The account; empty for app-wide items.
    ///   - name: The item's name.
    public init(kind: Kind, account: String = "", name: String) {
        self.kind = kind
        self.account = CanonicalText.nfc(account)
        self.name = CanonicalText.nfc(name)
    }

    /// Creates an item key from bytes, such as C strings', refusing an account or a
    /// name that is not valid UTF-8 rather than reading it with other characters in
    /// its place (two different names would become one item).
    /// - Parameters:
    ///   - kind: What sort of item this is.
    ///   - account: The account's bytes; empty for app-wide items.
    ///   - name: The name's bytes.
    /// - Throws: `LatchkeyError` `.invalidInput` saying which is not UTF-8 (never quoting it).
    public init(kind: Kind, account: some Collection<UInt8>, name: some Collection<UInt8>) throws {
        guard let accountText = String(validating: account, as: UTF8.self) else {
            throw LatchkeyError(.invalidInput, "the account is not valid UTF-8")
        }
        guard let nameText = String(validating: name, as: UTF8.self) else {
            throw LatchkeyError(.invalidInput, "the \(kind) name is not valid UTF-8")
        }
        self.init(kind: kind, account: accountText, name: nameText)
    }

    /// The kind and name; never the account, which may be personal data.
    public var description: String { "\(kind.rawValue)/\(name)" }
}
