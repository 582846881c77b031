extension ItemKey: Codable {
    private enum CodingKeys: String, CodingKey {
        case kind, account, name
    }

    /// Decodes an item key, normalising its account and name to NFC as `init(kind:account:name:)` does.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field is missing or of the wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            kind: try container.decode(Kind.self, forKey: .kind),
            account: try container.decode(String.self, forKey: .account),
            name: try container.decode(String.self, forKey: .name))
    }

    /// Encodes the kind, the account and the name.
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(account, forKey: .account)
        try container.encode(name, forKey: .name)
    }
}
