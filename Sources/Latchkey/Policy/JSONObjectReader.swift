/// Reads one JSON object of a Latchkey document key by key, refusing unknown
/// keys and wrong types with a message that names the file and the key path
/// (such as `policy/strict.json: sessions.maxAgeSeconds: ...`).
struct JSONObjectReader {
    /// The file or other origin of the document, for messages.
    let source: String
    /// The dotted path of this object inside the document; empty for the root.
    let path: String
    private let fields: [String: JSONValue]

    /// Starts reading `value`, which must be an object whose keys are all in `allowedKeys`.
    /// - Throws: `.invalidInput` naming the path when it is not an object or has an unknown key.
    init(_ value: JSONValue, path: String, source: String, allowedKeys: [String]) throws {
        self.source = source
        self.path = path
        guard case .object(let fields) = value else {
            throw LatchkeyError(
                .invalidInput,
                "\(source): \(path.isEmpty ? "the document" : path): must be an object, not \(value.typeName)")
        }
        self.fields = fields
        if let unknown = fields.keys.filter({ !allowedKeys.contains($0) }).sorted().first {
            let expected = allowedKeys.joined(separator: ", ")
            throw LatchkeyError(
                .invalidInput, "\(source): \(keyPath(unknown)): unknown key (expected one of: \(expected))")
        }
    }

    /// The dotted path of `key` in this object.
    func keyPath(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// An error about `key`, naming the file and the key path.
    func error(_ key: String, _ message: String) -> LatchkeyError {
        LatchkeyError(.invalidInput, "\(source): \(keyPath(key)): \(message)")
    }

    /// Whether `key` is present (with any value, null included).
    func contains(_ key: String) -> Bool { fields[key] != nil }

    /// The value of a key that must be present.
    /// - Throws: `.invalidInput` when it is missing.
    func required(_ key: String) throws -> JSONValue {
        guard let value = fields[key] else { throw error(key, "missing required key") }
        return value
    }

    /// A boolean, or nil when the key is absent.
    func bool(_ key: String) throws -> Bool? {
        guard let value = fields[key] else { return nil }
        guard case .bool(let flag) = value else { throw error(key, "must be true or false, not \(value.typeName)") }
        return flag
    }

    /// An integer within `range`, or nil when the key is absent.
    func integer(_ key: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let value = fields[key] else { return nil }
        return try integer(value, key: key, in: range, nullHint: "")
    }

    /// An integer within `range` or null (for "no bound"): `.some(nil)` for null,
    /// nil when the key is absent.
    func integerOrNull(_ key: String, in range: ClosedRange<Int64>) throws -> Int64?? {
        guard let value = fields[key] else { return nil }
        if value == .null { return .some(nil) }
        return .some(try integer(value, key: key, in: range, nullHint: " or null"))
    }

    private func integer(_ value: JSONValue, key: String, in range: ClosedRange<Int64>, nullHint: String) throws
        -> Int64
    {
        let wanted = "an integer from \(range.lowerBound) to \(range.upperBound)\(nullHint)"
        switch value {
        case .integer(let number) where range.contains(number):
            return number
        case .integer(let number):
            throw error(key, "must be \(wanted), not \(number)")
        default:
            throw error(key, "must be \(wanted), not \(value.typeName)")
        }
    }

    /// A string, or nil when the key is absent.
    func string(_ key: String) throws -> String? {
        guard let value = fields[key] else { return nil }
        guard case .string(let text) = value else { throw error(key, "must be a string, not \(value.typeName)") }
        return text
    }

    /// One of the stable names of `T`, or nil when the key is absent.
    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) throws -> T?
    where T.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let choice = T(rawValue: text) else {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw error(key, "must be one of \(names), not \"\(text)\"")
        }
        return choice
    }

    /// A nested object's reader, or nil when the key is absent.
    func object(_ key: String, allowedKeys: [String]) throws -> JSONObjectReader? {
        guard let value = fields[key] else { return nil }
        return try JSONObjectReader(value, path: keyPath(key), source: source, allowedKeys: allowedKeys)
    }
}
