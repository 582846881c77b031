import Foundation
import LatchkeyTestSupport
import Testing

/// One deadline, the policy's, honoured end to end (issue 14, item 14).
@Suite("latchkey honours the policy's Secret Service deadline", .sandboxed)
struct CLIHardeningDeadlineTests {
    @Test(
        "a bus that accepts and never answers: 75 after the policy's deadline (not a fixed 1 s, not a silent fallback)")
    func silentBus() throws {
        let store = try Store("file")
        let policy = store.directory + "/slow.json"
        try #"{"version": 1, "name": "slow", "backend": {"secretServiceTimeoutMilliseconds": 2000}}"#
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let socketPath = try freshDirectory() + "/bus"
        let listener = try SilentListener(path: socketPath)
        let clock = ContinuousClock()
        let start = clock.now
        let run = try withExtendedLifetime(listener) {
            try latchkeyWithin(
                20,
                [
                    "--policy", policy, "--backend", "auto", "--store-dir", store.storeDirectory, "--app", store.app,
                    "session", "list",
                ], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + socketPath])
        }
        let elapsed = clock.now - start
        #expect(run.status == 75, "\(run.stderr)")
        #expect(elapsed >= .milliseconds(1900), "the policy's 2 s deadline, not a shorter one: \(elapsed)")
        #expect(elapsed < .seconds(4), "one deadline, not two: \(elapsed)")
        #expect(
            !FileManager.default.fileExists(atPath: store.namespaceFile("credentials.vault")),
            "no silent fallback to the file")
    }
}
