/// A strict JSON reader (RFC 8259) for Latchkey's own documents (policies, audit
/// lines), written so that every tool reads a document the same way or not at all.
///
/// Refused, each with a message naming the line and column: a byte-order mark,
/// text that is not UTF-8, a repeated key in one object (other tools keep the
/// first or the last; Latchkey keeps neither), a trailing comma, comments, and
/// anything else RFC 8259 does not allow. Nesting deeper than ``maximumDepth`` is
/// refused too, so a crafted document cannot exhaust the stack.
///
/// A document another tool writes and reads (docker's credential input) may be read
/// with ``parseMembers(_:source:)`` instead, which keeps repeated keys, so its
/// reader can decide as that tool does.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 64

    private let bytes: UnsafeRawBufferPointer
    private let source: String
    /// Whether a repeated key in an object is an error; when it is not, the last one wins.
    private let refusesRepeatedKeys: Bool
    /// Whether string values (not keys) are read into zeroing memory (``JSONValue/secret(_:)``).
    private let secretStrings: Bool
    private var offset = 0
    private var depth = 0

    /// Parses `data` as exactly one JSON document.
    /// - Parameters:
    ///   - data: The document's bytes.
    ///   - source: The file or other origin, named in errors.
    /// - Returns: The document's value.
    /// - Throws: `LatchkeyError` `.invalidInput`: `<source>: line L, column C: <what is wrong>`.
    static func parse(_ data: some Collection<UInt8>, source: String) throws -> JSONValue {
        try Array(data).withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes, source: source, refusesRepeatedKeys: true, secretStrings: false)
            return try parser.document { try $0.value() }
        }
    }

    /// Parses `data` as exactly one JSON document that is an object, keeping its members in
    /// order, a repeated key as often as it appears; in the objects nested in it, the last of a
    /// repeated key wins (as Go's encoding/json and JavaScript's `JSON.parse` read them).
    /// Everything else is as strict as ``parse(_:source:)``.
    /// - Parameters:
    ///   - data: The document's bytes.
    ///   - source: The file or other origin, named in errors.
    /// - Returns: The object's members in order, or nil when the document is JSON but not an object.
    /// - Throws: `LatchkeyError` `.invalidInput`: `<source>: line L, column C: <what is wrong>`.
    static func parseMembers(_ data: some Collection<UInt8>, source: String) throws -> [(
        key: String, value: JSONValue
    )]? {
        try Array(data).withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes, source: source, refusesRepeatedKeys: false, secretStrings: false)
            return try parser.document { parser -> [(key: String, value: JSONValue)]? in
                guard parser.peek(UInt8(ascii: "{")) else {
                    _ = try parser.value()
                    return nil
                }
                return try parser.members()
            }
        }
    }

    /// Parses `secret` as exactly one JSON document that holds secrets (a token response),
    /// in place, without copying it: every string value is read straight into zeroing memory
    /// (``JSONValue/secret(_:)``), so nothing of the document is left behind once the values
    /// are released. Keys are plain strings.
    /// - Parameters:
    ///   - secret: The document's bytes.
    ///   - source: The origin, named in errors.
    /// - Returns: The document's value.
    /// - Throws: `LatchkeyError` `.invalidInput`, as ``parse(_:source:)``.
    static func parse(secret: SecretBytes, source: String) throws -> JSONValue {
        try secret.withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes, source: source, refusesRepeatedKeys: true, secretStrings: true)
            return try parser.document { try $0.value() }
        }
    }

    private init(bytes: UnsafeRawBufferPointer, source: String, refusesRepeatedKeys: Bool, secretStrings: Bool) {
        self.bytes = bytes
        self.source = source
        self.refusesRepeatedKeys = refusesRepeatedKeys
        self.secretStrings = secretStrings
    }

    /// Checks the whole text, reads one value with `read` and checks that nothing follows it.
    private mutating func document<Value>(_ read: (inout JSONParser) throws -> Value) throws -> Value {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw failure("a byte-order mark (U+FEFF) starts the document; save it as UTF-8 without one")
        }
        try requireUTF8()
        skipWhitespace()
        guard offset < bytes.count else { throw failure("the document is empty") }
        let value = try read(&self)
        skipWhitespace()
        guard offset == bytes.count else {
            throw failure("unexpected \(describe(bytes[offset])) after the document's end")
        }
        return value
    }

    /// Checks that the whole text is UTF-8, naming the first byte that is not.
    private mutating func requireUTF8() throws {
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8.ForwardParser()
        var position = 0
        while true {
            switch decoder.parseScalar(from: &iterator) {
            case .valid(let encoded):
                position += encoded.count
            case .error(let length):
                offset = position
                throw failure(
                    "the text is not UTF-8 (byte 0x\(String(bytes[position], radix: 16, uppercase: true)) at offset \(position), \(length) byte(s) invalid)"
                )
            case .emptyInput:
                return
            }
        }
    }

    private mutating func value() throws -> JSONValue {
        guard offset < bytes.count else { throw failure("the document ends where a value was expected") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return secretStrings ? .secret(try secretString()) : .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case let byte: throw failure("unexpected \(describe(byte)) where a value was expected")
        }
    }

    private mutating func object() throws -> JSONValue {
        .object(Dictionary(try members().lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last }))
    }

    /// An object's members in order (`offset` at its `{`); a repeated key is refused unless
    /// ``refusesRepeatedKeys`` is false.
    private mutating func members() throws -> [(key: String, value: JSONValue)] {
        try enter()
        offset += 1
        var members: [(key: String, value: JSONValue)] = []
        var keys: Set<String> = []
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            offset += 1
            depth -= 1
            return members
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else {
                if peek(UInt8(ascii: "}")) { throw failure("a trailing comma before '}'") }
                throw failure(
                    offset < bytes.count
                        ? "unexpected \(describe(bytes[offset])) where a key (a string) was expected"
                        : "the document ends inside an object")
            }
            let keyStart = offset
            let key = try string()
            if refusesRepeatedKeys, !keys.insert(key).inserted {
                offset = keyStart
                throw failure("duplicate key \(JSONText.quoted(key)) (each key may appear once in an object)")
            }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw failure("expected ':' after the key \(JSONText.quoted(key))") }
            offset += 1
            skipWhitespace()
            members.append((key, try value()))
            if try endOfElement(closing: UInt8(ascii: "}"), in: "an object") { return members }
        }
    }

    private mutating func array() throws -> JSONValue {
        try enter()
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            offset += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if peek(UInt8(ascii: "]")) { throw failure("a trailing comma before ']'") }
            elements.append(try value())
            if try endOfElement(closing: UInt8(ascii: "]"), in: "an array") { return .array(elements) }
        }
    }

    /// After an element of an object or array: skips a `,` and returns false, or
    /// the closing bracket and returns true.
    private mutating func endOfElement(closing: UInt8, in container: String) throws -> Bool {
        skipWhitespace()
        if peek(UInt8(ascii: ",")) {
            offset += 1
            return false
        }
        guard peek(closing) else {
            throw failure(
                offset < bytes.count
                    ? "expected ',' or \(describe(closing)) in \(container), not \(describe(bytes[offset]))"
                    : "the document ends inside \(container)")
        }
        offset += 1
        depth -= 1
        return true
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= JSONParser.maximumDepth else {
            throw failure("arrays and objects are nested deeper than \(JSONParser.maximumDepth) levels")
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws -> JSONValue {
        let expected = Array(word.utf8)
        guard bytes.count - offset >= expected.count, Array(bytes[offset..<offset + expected.count]) == expected else {
            throw failure("unexpected \(describe(bytes[offset])) where a value was expected")
        }
        offset += expected.count
        return value
    }

    private mutating func number() throws -> JSONValue {
        let start = offset
        var isInteger = true
        if peek(UInt8(ascii: "-")) { offset += 1 }
        if peek(UInt8(ascii: "0")) {
            offset += 1
            if peekDigit() { throw failure("a number may not have a leading zero") }
        } else {
            guard peekDigit() else { throw failure("a '-' must be followed by a digit") }
            skipDigits()
        }
        if peek(UInt8(ascii: ".")) {
            isInteger = false
            offset += 1
            guard peekDigit() else { throw failure("a '.' in a number must be followed by a digit") }
            skipDigits()
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isInteger = false
            offset += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { offset += 1 }
            guard peekDigit() else { throw failure("an exponent must have digits") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else {
            offset = start
            throw failure("the number \(text) is out of range")
        }
        return .number(number)
    }

    private mutating func string() throws -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        func flush(_ parser: JSONParser, until end: Int) {
            scalars.append(contentsOf: String(decoding: parser.bytes[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                flush(self, until: offset)
                offset += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(self, until: offset)
                scalars.append(try escape())
                runStart = offset
            case 0..<0x20:
                throw failure("a control character (\(describe(byte))) inside a string must be escaped")
            default:
                offset += 1
            }
        }
        throw failure("the document ends inside a string")
    }

    /// Reads a string value (`offset` at its opening quote) into zeroing memory: a first pass
    /// checks it and counts its UTF-8 bytes (escapes decoded), a second writes them, so no
    /// other copy is made.
    private mutating func secretString() throws -> SecretBytes {
        let start = offset
        var length = 0
        try scanString { scalar, _ in length += scalar.map { UTF8.width($0) } ?? 1 }
        let end = offset
        offset = start
        let value = try SecretBytes(count: length) { out in
            var written = 0
            try scanString { scalar, byte in
                if let scalar {
                    for unit in UTF8.encode(scalar)! {
                        out[written] = unit
                        written += 1
                    }
                } else {
                    out[written] = byte
                    written += 1
                }
            }
        }
        precondition(offset == end, "the second pass over a string reads what the first did")
        return value
    }

    /// Walks a string (`offset` at its opening quote) to just past its closing quote, handing
    /// `take` each escaped scalar, or nil and each plain byte.
    private mutating func scanString(_ take: (Unicode.Scalar?, UInt8) -> Void) throws {
        offset += 1
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return
            case UInt8(ascii: "\\"):
                take(try escape(), 0)
            case 0..<0x20:
                throw failure("a control character (\(describe(byte))) inside a string must be escaped")
            default:
                take(nil, byte)
                offset += 1
            }
        }
        throw failure("the document ends inside a string")
    }

    /// Reads one escape sequence (`offset` at the backslash), surrogate pairs included.
    private mutating func escape() throws -> Unicode.Scalar {
        offset += 1
        guard offset < bytes.count else { throw failure("the document ends inside a string") }
        let letter = bytes[offset]
        offset += 1
        switch letter {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try hexQuad()
            if (0xD800..<0xDC00).contains(high) {
                guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"),
                    bytes[offset + 1] == UInt8(ascii: "u")
                else {
                    throw failure("a \\u escape of a high surrogate must be followed by a low surrogate")
                }
                offset += 2
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw failure("a \\u escape of a high surrogate must be followed by a low surrogate")
                }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(high) else { throw failure("a \\u escape of a lone low surrogate") }
            return scalar
        default:
            offset -= 1
            throw failure("unknown escape '\\\(describe(letter))' in a string")
        }
    }

    private mutating func hexQuad() throws -> UInt32 {
        guard bytes.count - offset >= 4 else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for byte in bytes[offset..<offset + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
        }
        offset += 4
        return value
    }

    private func peek(_ byte: UInt8) -> Bool { offset < bytes.count && bytes[offset] == byte }

    private func peekDigit() -> Bool {
        offset < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset])
    }

    private mutating func skipDigits() { while peekDigit() { offset += 1 } }

    private mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    /// A byte as a message shows it: a printable ASCII character in quotes, else its value.
    private func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// An error at the current offset: `<source>: line L, column C: <message>`,
    /// the column counting characters (not bytes) from 1.
    private func failure(_ message: String) -> LatchkeyError {
        let end = min(offset, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0..<end where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        let column = 1 + bytes[lineStart..<end].filter { $0 & 0xC0 != 0x80 }.count
        return LatchkeyError(.invalidInput, "\(source): line \(line), column \(column): \(message)")
    }
}
