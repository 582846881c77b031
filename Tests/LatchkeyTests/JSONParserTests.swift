import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Strict JSON reading", .sandboxed)
struct JSONParserTests {
    /// Documents other tools read differently (or not at all), each with the
    /// place and the reason the message must name.
    static let refused: [(text: [UInt8], fragment: String)] = [
        (Array(#"{"version": 1, "name": "a", "name": "b"}"#.utf8), #"line 1, column 29: duplicate key "name""#),
        (
            Array("{\"audit\": {\"enabled\": true,\n  \"enabled\": false}}".utf8),
            #"line 2, column 3: duplicate key "enabled""#
        ),
        ([0xEF, 0xBB, 0xBF] + Array(#"{"version": 1}"#.utf8), "line 1, column 1: a byte-order mark"),
        (Array(#"{"version": 1, "name": "a",}"#.utf8), "line 1, column 28: a trailing comma before '}'"),
        (Array(#"{"a": [1, 2,]}"#.utf8), "a trailing comma before ']'"),
        (Array(#"{"name": "caf"#.utf8) + [0xE9] + Array(#""}"#.utf8), "line 1, column 14: the text is not UTF-8"),
        (Array("{\"a\": 1} // note".utf8), "unexpected '/' after the document's end"),
        (Array("{\"a\": \"tab\there\"}".utf8), "a control character"),
        (Array("{\"a\": 01}".utf8), "leading zero"),
        (Array("".utf8), "the document is empty"),
        (Array(String(repeating: "[", count: 65).utf8), "nested deeper than 64"),
    ]

    @Test(
        "refused documents name the line, the column and the reason, never Foundation's decoding text",
        arguments: 0..<11)
    func refusesWithPlace(index: Int) {
        let (text, fragment) = Self.refused[index]
        do {
            _ = try Policy(jsonData: text, source: "mine.json")
            Issue.record("accepted: \(String(decoding: text, as: UTF8.self))")
        } catch let error as LatchkeyError {
            #expect(error.code == .invalidInput)
            #expect(error.message.hasPrefix("mine.json: line "), "\(error.message)")
            #expect(error.message.contains(fragment), "\(error.message)")
            #expect(
                !error.message.contains("Expected to decode") && !error.message.contains("Dictionary<"),
                "\(error.message)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("what RFC 8259 allows reads as before: escapes, surrogate pairs, numbers, nesting")
    func readsValidDocuments() throws {
        let text =
            #"{"s": "a\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00", "i": -12, "d": 1.5e2, "z": 0, "n": null, "t": true, "f": false, "a": [[], {}]}"#
        let value = try JSONValue.parse(Array(text.utf8), source: "t")
        #expect(
            value
                == .object([
                    "s": .string("a\"\\/\u{08}\u{0C}\n\r\té😀"), "i": .integer(-12), "d": .number(150), "z": .integer(0),
                    "n": .null, "t": .bool(true), "f": .bool(false), "a": .array([.array([]), .object([:])]),
                ]))
        #expect(
            try JSONValue.parse(Array(" 9223372036854775808 ".utf8), source: "t") == .number(9_223_372_036_854_775_808))
    }
}
