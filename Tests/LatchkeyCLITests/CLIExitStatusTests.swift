import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

/// Every exit status of the table, each from a real situation.
@Suite("latchkey exit statuses", .sandboxed)
struct CLIExitStatusTests {
    /// A policy whose file vault needs a passphrase, with a fast KDF for tests; the
    /// agent keeps nothing unlocked, so every command needs it in both modes.
    static let passphrasePolicy = """
        {"version": 1, "name": "passphrase-test", "backend": {"kind": "file"},
         "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8}},
         "agent": {"unlockCacheSeconds": 0}}
        """

    /// Writes the passphrase policy and a private passphrase file into the store's directory.
    static func passphraseSetup(_ store: Store, passphrase: String) throws -> (policy: String, passphraseFile: String) {
        let policy = store.directory + "/passphrase.json"
        try passphrasePolicy.write(toFile: policy, atomically: true, encoding: .utf8)
        let passphraseFile = store.directory + "/passphrase"
        try passphrase.write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphraseFile)
        return (policy, passphraseFile)
    }

    /// Expects `run` to end with `status` and the matching JSON error code (run again with `--json`).
    private func expect(
        _ store: Store, _ arguments: [String], input: String = "", environment: [String: String?] = [:],
        status: Int32, code: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let run = try store.run(arguments, input: input, environment: environment)
        #expect(run.status == status, "\(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.hasPrefix("latchkey: "), sourceLocation: sourceLocation)
        let json = try store.run(["--json"] + arguments, input: input, environment: environment)
        #expect(json.status == status, sourceLocation: sourceLocation)
        #expect(try json.errorCode() == code, sourceLocation: sourceLocation)
        #expect(json.stderr.hasPrefix("latchkey: "), sourceLocation: sourceLocation)
    }

    @Test("0 and 1: found and not found", arguments: backends)
    func found(backend: String) throws {
        let store = try Store(backend)
        #expect(try store.run(["session", "put", "a"], input: "t").status == 0)
        #expect(try store.run(["session", "get", "a"]).status == 0)
        try expect(store, ["session", "get", "missing"], status: 1, code: "notFound")
        try expect(store, ["username", "get"], status: 1, code: "notFound")
    }

    @Test("65: a tampered vault file, a malformed policy, an altered audit trail")
    func tampered() throws {
        let store = try Store("file")
        try store.run(["session", "put", "a"], input: "token")
        var vault = try Data(contentsOf: URL(fileURLWithPath: store.namespaceFile("credentials.vault")))
        vault[vault.count - 5] ^= 0x01
        try vault.write(to: URL(fileURLWithPath: store.namespaceFile("credentials.vault")))
        try expect(store, ["session", "get", "a"], status: 65, code: "tampered")

        let policy = store.directory + "/bad-policy.json"
        try #"{"version": 1, "name": "bad", "sessions": {"maxAgeSecnds": 5}}"#.write(
            toFile: policy, atomically: true, encoding: .utf8)
        try expect(store, ["policy", "check", policy], status: 65, code: "invalidInput")
        #expect(try store.run(["policy", "check", policy]).stderr.contains("maxAgeSecnds"))
        try expect(store, ["--policy", policy, "status"], status: 65, code: "invalidInput")
    }

    @Test("65: audit verify finds an edited entry, with its sequence", arguments: backends)
    func auditTampered(backend: String) throws {
        let store = try Store(backend)
        try store.run(["session", "put", "first"], input: "t")
        try store.run(["session", "put", "second"], input: "t")
        let trail = try #require((try store.json(["status"])["auditTrails"] as? [String])?.first)
        let text = try String(contentsOfFile: trail, encoding: .utf8)
        try text.replacingOccurrences(of: "second", with: "sec0nd").write(
            toFile: trail, atomically: false, encoding: .utf8)
        try expect(store, ["audit", "verify"], status: 65, code: "tampered")
        let json = try store.run(["--json", "audit", "verify"]).json()
        #expect(json["intact"] as? Bool == false)
        let broken = try #require((json["trails"] as? [[String: Any]])?.first { $0["intact"] as? Bool == false })
        #expect(broken["sequence"] as? Int == 2)
    }

    @Test("69: the Secret Service is required and there is no session bus")
    func unavailable() throws {
        let store = try Store("secret-service", reachesService: false)
        let empty = try freshDirectory()
        try expect(
            store, ["status"], environment: ["DBUS_SESSION_BUS_ADDRESS": nil, "XDG_RUNTIME_DIR": empty],
            status: 69, code: "unavailable")
    }

    @Test("73: the store directory would be under a regular file")
    func cannotCreate() throws {
        let directory = try freshDirectory()
        #expect(FileManager.default.createFile(atPath: directory + "/file", contents: Data()))
        let store = Store(copying: try Store("file"), storeDirectory: directory + "/file/store")
        try expect(store, ["username", "set", "alice"], status: 73, code: "cannotCreate")
    }

    @Test(
        "74: a file that cannot be read (/proc/self/mem as the passphrase file: EIO); a directory as the policy is 65")
    func io() throws {
        let store = try Store("file")
        let (policy, _) = try Self.passphraseSetup(store, passphrase: "p")
        try expect(
            store, ["--policy", policy, "--passphrase-file", "/proc/self/mem", "status"], status: 74, code: "io")
        try expect(store, ["--policy", store.directory, "status"], status: 65, code: "invalidInput")
    }

    @Test("75: a session bus that accepts the connection and never answers")
    func timedOut() throws {
        let socketPath = try freshDirectory() + "/bus"
        let listener = try SilentListener(path: socketPath)
        let store = try Store("secret-service", reachesService: false)
        try withExtendedLifetime(listener) {
            try expect(
                store, ["status"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + socketPath],
                status: 75, code: "timedOut")
        }
    }

    @Test("77: a wrong passphrase, a missing one, a vault others can read, a policy that forbids the file")
    func denied() throws {
        let store = try Store("file")
        let (policy, passphraseFile) = try Self.passphraseSetup(store, passphrase: "correct horse\n")
        let withPolicy = ["--policy", policy]
        #expect(
            try store.run(withPolicy + ["--passphrase-file", passphraseFile, "session", "put", "a"], input: "token")
                .status == 0)
        #expect(
            try store.run(withPolicy + ["--passphrase-fd", "0", "session", "get", "a"], input: "correct horse\n").text
                == "token\n")
        let status = try store.run(withPolicy + ["--passphrase-fd", "0", "status"], input: "correct horse").text
        #expect(status.contains("passphrase"))
        try expect(
            store, withPolicy + ["--passphrase-fd", "0", "session", "get", "a"], input: "wrong horse\n", status: 77,
            code: "wrongKey")
        try expect(store, withPolicy + ["session", "get", "a"], status: 77, code: "wrongKey")
        #expect(try store.run(withPolicy + ["session", "get", "a"]).stderr.contains("--passphrase-fd"))

        let plain = try Store("file")
        try plain.run(["session", "put", "a"], input: "token")
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o644], ofItemAtPath: plain.namespaceFile("credentials.vault"))
        try expect(plain, ["session", "get", "a"], status: 77, code: "insecurePermissions")

        try expect(try Store("file"), ["--policy", "built-in:strict", "status"], status: 77, code: "policyDenied")
    }

    @Test("a passphrase from another descriptor (--passphrase-fd 3)")
    func passphraseDescriptor() throws {
        let store = try Store("file")
        let (policy, passphraseFile) = try Self.passphraseSetup(store, passphrase: "fd three")
        let command = ([try latchkeyPath()] + store.options + ["--policy", policy, "--passphrase-fd", "3", "session"])
            .map { "'\($0)'" }.joined(separator: " ")
        let put = try Child("/bin/sh", ["-c", "\(command) put a 3<'\(passphraseFile)'"]).finish(
            writing: Data("secret".utf8))
        #expect(put.status == 0, "\(put.stderr)")
        let get = try Child("/bin/sh", ["-c", "\(command) get a 3<'\(passphraseFile)'"]).finish()
        #expect(get.text == "secret\n")
    }
}

extension Store {
    /// `other` with another store directory.
    init(copying other: Store, storeDirectory: String) {
        self = other
        self.storeDirectory = storeDirectory
    }
}

/// A Unix socket that accepts connections into its backlog and never answers:
/// a D-Bus session bus that hangs.
final class SilentListener {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw TestSupportError("bind/listen failed for \(path)") }
    }

    deinit { close(descriptor) }
}
