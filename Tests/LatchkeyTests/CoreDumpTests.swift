import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Secrets and core dumps")
struct CoreDumpTests {
    @Test("the process is not dumpable while it holds a secret (prctl PR_GET_DUMPABLE)")
    func notDumpableWhileHoldingSecrets() {
        let token = SecretBytes(utf8: "a token read from standard input")
        #expect(!POSIX.isDumpable, "a crash now would write the token into a core dump")
        let read = SecretBytes(count: 16) { $0.initializeMemory(as: UInt8.self, repeating: 7) }
        #expect(!POSIX.isDumpable)
        withExtendedLifetime((token, read)) {}
    }
}
