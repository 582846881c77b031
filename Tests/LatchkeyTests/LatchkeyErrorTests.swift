import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("LatchkeyError")
struct LatchkeyErrorTests {
    @Test("equality is on the code only, and the description names the C call")
    func equalityAndDescription() {
        let a = LatchkeyError(.locked, "collection is locked", cFunction: "secret_service_search_sync")
        let b = LatchkeyError(.locked, "another message")
        #expect(a == b)
        #expect(a != LatchkeyError(.timedOut, "collection is locked"))
        #expect(String(describing: a) == "collection is locked (secret_service_search_sync)")
    }

    @Test(
        "app ids are validated at construction",
        arguments: [
            ("com.example.notes", true), ("a", true), ("", false), (".hidden", false),
            ("-flag", false), ("has/slash", false), ("has space", false), (String(repeating: "a", count: 129), false),
        ])
    func appIDs(text: String, valid: Bool) {
        let accepted = (try? AppID(text)) != nil
        #expect(accepted == valid)
    }
}
