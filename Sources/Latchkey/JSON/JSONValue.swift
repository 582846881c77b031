/// A parsed JSON document as a small value tree, so that Latchkey's own formats
/// (policies, audit lines, the git helper's index) can be validated key by key with precise messages.
///
/// Integers are kept apart from other numbers so that `3` and `3.5` can be told
/// apart exactly; objects keep their keys in a dictionary (``JSONParser`` refuses a repeated key,
/// so no value is ever lost; ``parseMembers(_:source:)`` keeps repeats, in order, for the
/// caller to decide).
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    /// A string value of a document parsed as secret (``JSONParser/parse(secret:source:)``),
    /// in zeroing memory, as UTF-8.
    case secret(SecretBytes)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses `data` as one JSON document, strictly (see ``JSONParser``).
    /// - Throws: `LatchkeyError` `.invalidInput` naming `source`, the line and
    ///   the column when it is not exactly one RFC 8259 document without
    ///   repeated keys, byte-order mark or trailing comma.
    package static func parse(_ data: some Collection<UInt8>, source: String) throws -> JSONValue {
        try JSONParser.parse(data, source: source)
    }

    /// Parses `data` as one JSON object, keeping every member in order, a repeated key
    /// as often as it appears, for a reader that must decide on repeats as another tool
    /// does (see ``JSONParser/parseMembers(_:source:)``).
    /// - Returns: The members, or nil when the document is JSON but not an object.
    /// - Throws: `LatchkeyError` `.invalidInput` naming `source`, the line and the column
    ///   when it is not exactly one RFC 8259 document.
    package static func parseMembers(_ data: some Collection<UInt8>, source: String) throws -> [(
        key: String, value: JSONValue
    )]? {
        try JSONParser.parseMembers(data, source: source)
    }

    /// The name of the value's JSON type, for messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string, .secret: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
