import Foundation
import LatchkeyTestSupport
import Testing

/// Every file Latchkey reads has a cap checked before reading (issue 25): a 2 GiB
/// sparse vault took 18 s and 4.2 GB of memory before failing authentication.
@Suite("latchkey refuses files longer than their format holds, before reading them", .sandboxed)
struct CLIHardeningCapTests {
    @Test("a 2 GiB sparse vault is refused in under a second and under 200 MiB of memory")
    func hugeVault() throws {
        let store = try Store("file")
        #expect(try store.run(["session", "put", "api"], input: "token\n").status == 0)
        let vault = try FileHandle(forWritingTo: URL(fileURLWithPath: store.vaultPath))
        try vault.truncate(atOffset: 2 << 30)
        try vault.close()
        let measures = try freshDirectory() + "/time"
        let run = try Child(
            "/usr/bin/time", ["-f", "%M %e", "-o", measures, try latchkeyPath()] + store.options + ["session", "list"]
        ).finish()
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains(store.vaultPath) && run.stderr.contains("the most Latchkey reads"), "\(run.stderr)")
        // time(1) writes "Command exited with non-zero status 65" first, then the figures.
        let report = try String(contentsOfFile: measures, encoding: .utf8)
        let figures = (report.split(separator: "\n").last ?? "").split(separator: " ")
        let kilobytes = try #require(Int(figures.first ?? ""))
        let seconds = try #require(Double(figures.last ?? ""))
        #expect(kilobytes < 200 * 1024, "peak resident memory \(kilobytes) KiB")
        #expect(seconds < 1, "took \(seconds) s")
        print("2 GiB sparse vault refused: \(kilobytes) KiB peak resident, \(seconds) s")
    }
}
