#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A parsed JSON document as a small value tree, so that Latchkey's own formats
/// (policies, audit lines) can be validated key by key with precise messages.
///
/// Integers are kept apart from other numbers so that `3` and `3.5` can be told
/// apart exactly; objects keep their keys in a dictionary (JSONDecoder does not
/// report the order, and a repeated key keeps one of its values).
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses `data` as one JSON document.
    /// - Throws: `LatchkeyError` `.invalidInput` naming `source` when it is not JSON.
    static func parse(_ data: some Collection<UInt8>, source: String) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(data))
        } catch let error as DecodingError {
            throw LatchkeyError(.invalidInput, "\(source): not valid JSON (\(JSONValue.describe(error)))")
        } catch {
            throw LatchkeyError(.invalidInput, "\(source): not valid JSON")
        }
    }

    /// The name of the value's JSON type, for messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context), .typeMismatch(_, let context),
             .valueNotFound(_, let context), .keyNotFound(_, let context):
            return context.debugDescription
        @unknown default:
            return "unreadable"
        }
    }
}

extension JSONValue: Decodable {
    /// Decodes any JSON value, trying the narrowest type first.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) { // a mismatch only means "not this type"
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) { // as above
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) { // as above
            self = .number(value)
        } else if let value = try? container.decode(String.self) { // as above
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) { // as above
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
