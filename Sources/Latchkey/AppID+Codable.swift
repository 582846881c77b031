extension AppID: Codable {
    /// Decodes an app id from its text, refusing an invalid one as ``init(_:)`` does.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError.dataCorrupted` with the ``LatchkeyError`` as its
    ///   underlying error when the text is not a valid app id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a valid app id: \(error)")
        }
    }

    /// Encodes the app id as its text.
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
