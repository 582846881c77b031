import Foundation
import LatchkeyTestSupport
import Testing

/// What a file `session put` makes durable, counted with strace (issue 13: at most
/// 3 `fsync`/`fdatasync` calls is the target; today's scheme makes 4, each needed
/// for the crash-safety argument of docs/AUDIT-TRAIL.md and docs/FILE-FORMAT.md).
@Suite("A file session put syncs what it must, and no more", .sandboxed)
struct CLIDurabilityTests {
    /// strace's path, when it is installed (`.ci/install-deps` installs it for `make test`).
    static let strace: String? = ["/usr/bin/strace", "/bin/strace"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test(
        "a session put syncs the vault's new file, its directory, the trail and the anchor: one call each",
        .enabled(if: strace != nil, "strace is not installed: run `make test`, which installs it"))
    func syncsPerPut() throws {
        let store = try Store("file")
        // The first put creates the namespace (keys, trail, anchor); the second is the steady state.
        #expect(try store.run(["session", "put", "first"], input: "t0").status == 0)
        let log = store.directory + "/strace.log"
        let run = try runProgram(
            try #require(Self.strace),
            ["-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", log, try latchkeyPath()]
                + store.options + ["session", "put", "access"], input: "token",
            // In this process, which strace follows (an agent is not its child).
            environment: ["LATCHKEY_AGENT": "off"])
        #expect(run.status == 0, "\(run.stderr)")
        let syncs = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("fsync(") || $0.contains("fdatasync(") }
        // strace names each descriptor by its resolved path.
        let namespace = URL(fileURLWithPath: store.storeDirectory + "/\(store.app).d").resolvingSymlinksInPath().path
        func count(_ call: String, _ path: (String) -> Bool) -> Int {
            syncs.filter { line in
                guard line.contains(call + "("), let open = line.firstIndex(of: "<"),
                    let close = line[open...].firstIndex(of: ">")
                else { return false }
                return path(String(line[line.index(after: open)..<close]))
            }.count
        }
        #expect(count("fsync") { $0.hasPrefix(namespace + "/.latchkey-tmp-credentials.vault") } == 1, "\(syncs)")
        #expect(count("fsync") { $0 == namespace } == 1, "\(syncs)")
        #expect(count("fsync") { $0 == namespace + "/audit.file.jsonl" } == 1, "\(syncs)")
        #expect(count("fdatasync") { $0 == namespace + "/audit.file.anchor" } == 1, "\(syncs)")
        #expect(syncs.count == 4, "every sync a file session put makes: \(syncs)")
    }
}
