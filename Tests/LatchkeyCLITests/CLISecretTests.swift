import Foundation
import LatchkeyTestSupport
import Testing

@Suite("latchkey keeps secrets out of sight", .sandboxed)
struct CLISecretTests {
    @Test(
        "a token never appears in the process's argv or environment, stderr, status, the audit trail or file names",
        arguments: backends)
    func canary(backend: String) throws {
        let store = try Store(backend)
        let canary = "CANARY-" + UUID().uuidString
        // Standard input stays open, unwritten, while /proc is read: the process is waiting for its secret.
        let child = try Child(try latchkeyPath(), store.options + ["session", "put", "canary", "--account", "alice"])
        let pid = child.process.processIdentifier
        // Until the child has executed latchkey, /proc shows the test process's fork (or nothing).
        var cmdline = Data()
        for _ in 0..<500 where !String(decoding: cmdline, as: UTF8.self).contains("session\u{0}put") {
            Thread.sleep(forTimeInterval: 0.01)
            cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        }
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        #expect(
            String(decoding: cmdline, as: UTF8.self).contains("session\u{0}put\u{0}canary"),
            "the command line is latchkey's")
        #expect(!environ.isEmpty)
        let put = try child.finish(writing: Data((canary + "\n").utf8))
        #expect(put.status == 0, "\(put.stderr)")
        for (what, data) in [("cmdline", cmdline), ("environ", environ), ("stdout", put.stdout)] {
            #expect(!String(decoding: data, as: UTF8.self).contains(canary), "\(what)")
        }
        #expect(!put.stderr.contains(canary))

        let get = try store.run(["session", "get", "canary", "--account", "alice"])
        #expect(get.text == canary + "\n")
        #expect(!get.stderr.contains(canary))
        for arguments in [
            ["status"], ["--json", "status"], ["audit", "show"], ["--json", "audit", "show"],
            ["session", "list"], ["--json", "session", "list"], ["logout"],
        ] {
            let run = try store.run(arguments)
            #expect(!run.text.contains(canary) && !run.stderr.contains(canary), "\(arguments)")
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: store.storeDirectory)
        #expect(!files.isEmpty)
        for file in files {
            #expect(!file.contains(canary))
            let contents = FileManager.default.contents(atPath: store.storeDirectory + "/" + file) ?? Data()
            #expect(contents.range(of: Data(canary.utf8)) == nil, "\(file)")
        }
    }

    @Test("--passphrase-fd 0 is refused where standard input carries the token")
    func passphraseOnStandardInput() throws {
        let store = try Store("file")
        let run = try store.run(
            ["--passphrase-fd", "0", "--policy", "built-in:default", "session", "put", "a"], input: "token")
        // The default policy needs no passphrase, so the descriptor is never read and the token is stored.
        #expect(run.status == 0)
        let (policy, _) = try CLIExitStatusTests.passphraseSetup(store, passphrase: "unused")
        let refused = try store.run(
            ["--policy", policy, "--passphrase-fd", "0", "session", "put", "b"], input: "token")
        #expect(refused.status == 64)
    }

    @Test("JSON escaping of a token with quotes, backslashes and control characters")
    func jsonEscaping() throws {
        let store = try Store("file")
        let token = "a\"b\\c\td\u{1}e/é"
        try store.run(["session", "put", "odd"], input: token)
        #expect(try store.json(["session", "get", "odd"])["secret"] as? String == token)
    }
}
