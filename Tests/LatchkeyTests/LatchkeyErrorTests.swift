import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("LatchkeyError", .sandboxed)
struct LatchkeyErrorTests {
    @Test("equality is on the code and the errno value, not the message; the description names the C call")
    func equalityAndDescription() {
        let a = LatchkeyError(.locked, "collection is locked", cFunction: "secret_service_search_sync")
        let b = LatchkeyError(.locked, "another message")
        #expect(a == b)
        #expect(a != LatchkeyError(.timedOut, "collection is locked"))
        #expect(LatchkeyError(.io, "x", errnoCode: ENOSPC) != LatchkeyError(.io, "x", errnoCode: EIO))
        #expect(String(describing: a) == "collection is locked (secret_service_search_sync)")
    }

    @Test("localizedDescription is the message (with the C call), not Foundation's generic text")
    func localizedDescription() {
        let error: any Error = LatchkeyError(.io, "/store/x.vault: No space left on device", cFunction: "write")
        #expect(error.localizedDescription == "/store/x.vault: No space left on device (write)")
    }

    @Test("a failed system call keeps its errno")
    func keepsErrno() throws {
        let directory = try freshDirectory()
        let refused = #expect(throws: LatchkeyError.self) {
            try POSIX.File.open(directory + "/missing/file", .read)
        }
        #expect(refused?.code == .notFound && refused?.errnoCode == ENOENT && refused?.cFunction == "open")
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
