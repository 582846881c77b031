import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// Dumpability is the process's, so each case runs in a process of its own
/// (`latchkey-testhelper dumpable`), never in the shared test process.
@Suite("Secrets and core dumps", .sandboxed)
struct CoreDumpTests {
    @Test(
        "the library leaves the process dumpable while it holds a secret unless the app opted in; the opt-in forbids dumps while one lives and restores them after",
        arguments: [("default", "1 1 1"), ("protected", "1 0 1")])
    func dumpableUnlessTheAppOptsIn(mode: String, expected: String) throws {
        let run = try runProgram(testHelperPath(), ["dumpable", mode])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.text == expected + "\n", "before, while holding and after holding a secret")
    }
}
