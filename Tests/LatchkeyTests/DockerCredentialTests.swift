import Testing

@testable import Latchkey
@testable import LatchkeyCredentialHelpers

@Suite("Docker credential input", .sandboxed)
struct DockerCredentialTests {
    /// Inputs Go's encoding/json (what docker-credential-helpers decode `store`'s input with)
    /// reads in its own way, and the server URL, username and secret it reads from each.
    static let goDecoded: [(input: String, serverURL: String, username: String, secret: String)] = [
        // a repeated key: the last one wins
        (
            #"{"ServerURL":"a.example","Username":"u1","Secret":"s1","Username":"u2","Secret":"s2"}"#, "a.example",
            "u2", "s2"
        ),
        // a key matches its field whatever its case, so a differently spelt repeat is a repeat too
        (#"{"ServerURL":"a.example","Username":"u","Secret":"s","serverurl":"b.example"}"#, "b.example", "u", "s"),
        (#"{"serverURL":"b.example","USERNAME":"u","secret":"s"}"#, "b.example", "u", "s"),
        // Go folds U+017F (long s) to S when it matches a key
        (#"{"ServerURL":"b.example","Username":"u","Secret":"s1","\u017Fecret":"s2"}"#, "b.example", "u", "s2"),
        // null leaves the field as it was
        (#"{"ServerURL":"b.example","Username":"u","Secret":"s","Secret":null}"#, "b.example", "u", "s"),
        // repeats inside a field docker-credential-helpers ignore are no error
        (#"{"ServerURL":"b.example","Username":"u","Secret":"s","Other":{"a":1,"a":2}}"#, "b.example", "u", "s"),
    ]

    @Test(
        "repeated keys are read as Go's encoding/json reads them: the last wins, keys match in any case",
        arguments: 0..<6)
    func goDecoding(index: Int) throws {
        let expected = Self.goDecoded[index]
        let credential = try DockerCredential.parse(SecretBytes(utf8: expected.input))
        #expect(credential.serverURL.original == expected.serverURL)
        #expect(credential.username == expected.username)
        #expect(credential.secret == SecretBytes(utf8: expected.secret))
    }

    @Test(
        "a value of the wrong type is refused even when a string for the same field follows, as Go does",
        arguments: [
            #"{"ServerURL":"r.example","Username":"u","Secret":42,"Secret":"s"}"#,
            #"{"ServerURL":"r.example","Username":"u","secret":["s"],"Secret":"s"}"#,
        ])
    func wrongTypeRefused(input: String) {
        let error = #expect(throws: LatchkeyError.self) { try DockerCredential.parse(SecretBytes(utf8: input)) }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains("'Secret' field is not a string") == true, "\(error?.message ?? "")")
    }

    @Test("the policy's parser still refuses a repeated key")
    func policyStaysStrict() {
        let error = #expect(throws: LatchkeyError.self) {
            try Policy(jsonData: Array(#"{"version": 1, "version": 1}"#.utf8), source: "p.json")
        }
        #expect(error?.message.contains("duplicate key") == true)
    }
}
