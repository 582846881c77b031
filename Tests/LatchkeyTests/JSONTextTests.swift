import Testing

@testable import Latchkey

@Suite("JSON text")
struct JSONTextTests {
    @Test(
        "a string literal escapes exactly quotes, backslashes, controls and DEL, and keeps every other byte",
        arguments: [
            ("plain text", #""plain text""#),
            (#"a"b\c"#, #""a\"b\\c""#),
            ("\n\r\t", #""\n\r\t""#),
            ("\u{00}\u{01}\u{1F}\u{7F}", #""\u0000\u0001\u001f\u007f""#),
            ("é → 😀", "\"é → 😀\""),
            ("é\"\u{00}😀\\", #""é\"\u0000😀\\""#),
            ("", #""""#),
        ])
    func quoted(text: String, literal: String) throws {
        #expect(JSONText.quoted(text) == literal)
        // The secret's form writes the same bytes.
        #expect(try JSONText.quoted(SecretBytes(utf8: text)) == SecretBytes(utf8: literal))
    }

    @Test("every ASCII character is quoted as the secret's form quotes it, and parses back to itself")
    func everyASCIICharacter() throws {
        for value in 0..<128 {
            let text = "x" + String(UnicodeScalar(UInt8(value))) + "y"
            let literal = JSONText.quoted(text)
            #expect(try JSONText.quoted(SecretBytes(utf8: text)) == SecretBytes(utf8: literal), "\(value)")
            #expect(try JSONValue.parse(Array(literal.utf8), source: "test") == .string(text), "\(value)")
        }
    }
}
