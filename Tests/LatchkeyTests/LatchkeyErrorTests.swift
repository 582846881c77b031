import Testing
@testable import Latchkey

@Suite("LatchkeyError")
struct LatchkeyErrorTests {
    @Test("every code maps to its documented exit status", arguments: [
        (LatchkeyError.Code.notFound, Int32(1)),
        (.usage, 64), (.tampered, 65), (.invalidInput, 65), (.unavailable, 69),
        (.internal, 70), (.cannotCreate, 73), (.io, 74), (.locked, 75), (.timedOut, 75),
        (.wrongKey, 77), (.insecurePermissions, 77), (.policyDenied, 77),
    ])
    func exitStatus(code: LatchkeyError.Code, status: Int32) {
        #expect(code.exitStatus == status)
    }

    @Test("an unknown code maps to the internal-error status")
    func unknownCode() {
        #expect(LatchkeyError.Code(rawValue: "fromTheFuture").exitStatus == 70)
    }

    @Test("equality is on the code only, and the description names the C call")
    func equalityAndDescription() {
        let a = LatchkeyError(.locked, "collection is locked", cFunction: "secret_service_search_sync")
        let b = LatchkeyError(.locked, "another message")
        #expect(a == b)
        #expect(a != LatchkeyError(.timedOut, "collection is locked"))
        #expect(String(describing: a) == "collection is locked (secret_service_search_sync)")
    }

    @Test("app ids are validated at construction", arguments: [
        ("com.example.notes", true), ("a", true), ("", false), (".hidden", false),
        ("-flag", false), ("has/slash", false), ("has space", false), (String(repeating: "a", count: 129), false),
    ])
    func appIDs(text: String, valid: Bool) {
        let accepted = (try? AppID(text)) != nil
        #expect(accepted == valid)
    }
}
