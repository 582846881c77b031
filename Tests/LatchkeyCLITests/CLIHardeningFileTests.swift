import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

/// Files that are not what they should be: FIFOs and devices, policies others
/// could change, symbolic links, missing files (issue 14, items 7, 9 and 16).
@Suite("latchkey refuses files that are not what they should be", .sandboxed)
struct CLIHardeningFileTests {
    @Test("a FIFO or a device where a file is expected is refused at once with 65 naming the path")
    func fifos() throws {
        let store = try Store("file")
        let fifo = store.directory + "/fifo"
        try makeFIFO(fifo)
        expectRefusal(try latchkeyWithin(10, store.options + ["--policy", fifo, "status"]), status: 65, naming: fifo)
        expectRefusal(try latchkeyWithin(10, ["policy", "check", fifo]), status: 65, naming: fifo)
        expectRefusal(try latchkeyWithin(10, ["policy", "check", "/dev/zero"]), status: 65, naming: "/dev/zero")

        let (policy, _) = try CLIExitStatusTests.passphraseSetup(store, passphrase: "p")
        expectRefusal(
            try latchkeyWithin(10, store.options + ["--policy", policy, "--passphrase-file", fifo, "status"]),
            status: 65, naming: fifo)

        let config = store.directory + "/config"
        try FileManager.default.createDirectory(atPath: config + "/latchkey", withIntermediateDirectories: true)
        try makeFIFO(config + "/latchkey/policy.json")
        expectRefusal(
            try latchkeyWithin(10, store.options + ["status"], environment: ["XDG_CONFIG_HOME": config]),
            status: 65, naming: config + "/latchkey/policy.json")

        #expect(try store.run(["session", "put", "a"], input: "t").status == 0)
        for (name, command) in [
            ("audit.file.jsonl", ["audit", "verify"]), ("credentials.vault", ["session", "get", "a"]),
        ] {
            let path = store.namespaceFile(name)
            try FileManager.default.removeItem(atPath: path)
            try makeFIFO(path)
            expectRefusal(try latchkeyWithin(10, store.options + command), status: 65, naming: path)
        }
    }

    @Test("a policy file too long to be one is refused without reading it all")
    func longPolicy() throws {
        let directory = try freshDirectory()
        let path = directory + "/huge.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x20, count: 4 << 20)))
        let run = try latchkeyWithin(10, ["policy", "check", path])
        expectRefusal(run, status: 65, naming: path)
        #expect(run.stderr.contains("longer than"))
    }

    @Test("a policy others could change, or in a directory others could change, is refused with 77")
    func policyPermissions() throws {
        let store = try Store("file")
        let policy = store.directory + "/policy.json"
        try #"{"version": 1, "name": "no-audit", "audit": {"enabled": false}}"#.write(
            toFile: policy, atomically: true, encoding: .utf8)
        try setMode(policy, 0o644)
        #expect(try store.run(["--policy", policy, "status"]).status == 0, "a readable policy holds no secret")
        try setMode(policy, 0o666)
        expectRefusal(try store.run(["--policy", policy, "status"]), status: 77, naming: policy)
        expectRefusal(try store.run(["policy", "check", policy]), status: 77, naming: policy)
        try setMode(policy, 0o600)
        if geteuid() == 0 {
            #expect(chown(policy, 65534, 65534) == 0)
            expectRefusal(try store.run(["--policy", policy, "status"]), status: 77, naming: policy)
            #expect(chown(policy, 0, 0) == 0)
        }
        try setMode(store.directory, 0o777)
        defer { try? setMode(store.directory, 0o700) }
        expectRefusal(try store.run(["--policy", policy, "status"]), status: 77, naming: store.directory)
    }

    @Test("one status per kind of fault: symbolic links 77 saying so, missing files named on the command line 64")
    func consistentStatuses() throws {
        let store = try Store("file")
        #expect(try store.run(["session", "put", "a"], input: "t").status == 0)
        let target = store.directory + "/elsewhere"
        for name in ["credentials.vault", "credentials.key"] {
            let path = store.namespaceFile(name)
            try FileManager.default.moveItem(atPath: path, toPath: target)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            let run = try store.run(["session", "get", "a"])
            expectRefusal(run, status: 77, naming: path)
            #expect(run.stderr.contains("is a symbolic link"), "\(run.stderr)")
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: target, toPath: path)
        }
        let linked = Store(copying: store, storeDirectory: store.directory + "/linked")
        try FileManager.default.createSymbolicLink(
            atPath: linked.storeDirectory, withDestinationPath: store.storeDirectory)
        let run = try linked.run(["session", "get", "a"])
        expectRefusal(run, status: 77, naming: linked.storeDirectory)
        #expect(run.stderr.contains("is a symbolic link") && !run.stderr.contains("not a directory"), "\(run.stderr)")

        let missing = store.directory + "/missing.json"
        expectRefusal(try latchkey(["policy", "check", missing]), status: 64, naming: missing)
        expectRefusal(try store.run(["--policy", missing, "status"]), status: 64, naming: missing)
    }
}
