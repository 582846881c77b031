import Foundation
import LatchkeyTestSupport
import Testing

/// A listener of user nobody where the client looks for its agent, recording every
/// byte it receives and closing each connection once it goes quiet.
private final class ForeignListener {
    let child: Child

    /// What the listener does: bind beside `path` (0600), listen, and only then move the
    /// socket to `path` (so the test, which waits for `path` and then changes the socket's
    /// owner, never races the listener's own chmod or finds a socket that does not listen
    /// yet), then accept and read until its standard input ends; it prints the hex of
    /// everything received.
    static let script = """
        import os, select, socket, sys
        path = sys.argv[1]
        s = socket.socket(socket.AF_UNIX); s.bind(path + ".new"); os.chmod(path + ".new", 0o600); s.listen(16)
        os.rename(path + ".new", path)
        got, conns = b"", []
        while True:
            readable, _, _ = select.select([s, sys.stdin] + conns, [], [], 0.3)
            if not readable:
                for c in conns: c.close()
                conns = []
            for r in readable:
                if r is sys.stdin:
                    if not os.read(0, 1):
                        print(got.hex()); sys.exit(0)
                elif r is s:
                    conns.append(s.accept()[0])
                else:
                    data = r.recv(65536)
                    got += data
                    if not data:
                        conns.remove(r); r.close()
        """

    init(socket: String) throws {
        let command = try #require(CLIAgentTests.asNobody)
        child = try Child(
            "/usr/bin/env", command + ["/usr/bin/python3", "-c", Self.script, socket])
        let end = Date(timeIntervalSinceNow: 5)
        while !FileManager.default.fileExists(atPath: socket) && Date() < end { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// Stops it; every byte it received.
    func received() throws -> [UInt8] {
        let hex = try child.finish().text.trimmingCharacters(in: .whitespacesAndNewlines)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }
}

@Suite("latchkey agent: the client trusts only its own agent", .sandboxed)
struct CLIAgentTrustTests {
    /// How the socket the client finds is not its agent's.
    enum Planted: String, CaseIterable, CustomTestStringConvertible {
        /// The runtime directory is world-writable (1777); the other user made `latchkey/` and the socket.
        case worldWritableRuntime
        /// The directories are the user's own and private, the socket file another user's.
        case socketOfOtherUser
        /// Every file is the user's own and private, but the process listening is another user's.
        case peerOfOtherUser

        var testDescription: String { rawValue }
    }

    @Test(
        "a listener of another uid receives no byte of a token, a passphrase or a git password; the commands run in-process",
        .enabled(
            if: CLIAgentTests.asNobody != nil,
            "needs root, or sudo without a password, to run a listener as another user"),
        arguments: Planted.allCases)
    func foreignListener(planted: Planted) throws {
        let sandbox = try AgentSandbox(reachable: true)
        let directory = sandbox.runtime + "/latchkey"
        let files = FileManager.default
        try files.createDirectory(atPath: directory, withIntermediateDirectories: false)
        switch planted {
        case .worldWritableRuntime:
            try files.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: sandbox.runtime)
            try files.setAttributes(
                [.posixPermissions: 0o700, .ownerAccountID: 65534, .groupOwnerAccountID: 65534], ofItemAtPath: directory
            )
        case .socketOfOtherUser, .peerOfOtherUser:
            try files.setAttributes([.posixPermissions: 0o711], ofItemAtPath: sandbox.runtime)
            try files.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
        }
        let listener = try ForeignListener(socket: sandbox.socket)
        #expect(files.fileExists(atPath: sandbox.socket))
        if planted != .worldWritableRuntime {
            try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: sandbox.runtime)
            try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory)
        }
        if planted == .peerOfOtherUser {
            try files.setAttributes(
                [.ownerAccountID: getuid(), .groupOwnerAccountID: getgid(), .posixPermissions: 0o600],
                ofItemAtPath: sandbox.socket)
        }

        let token = "token-canary-7f3a91"
        let put = try sandbox.run(["session", "put", "api"], input: token)
        #expect(put.status == 0, "\(put.stderr)")
        #expect(put.stderr.contains("not using the agent socket"), "\(put.stderr)")
        #expect(put.stderr.components(separatedBy: "not using the agent socket").count == 2, "said once")
        let get = try sandbox.run(["session", "get", "api"], agent: false)
        #expect(get.text == token + "\n", "the put ran in-process: \(get.stderr)")

        let (policy, passphraseFile) = try CLIAgentTests.passphrasePolicy(sandbox, cache: 900)
        let passphrase = "correct horse"
        let withPassphrase = try sandbox.run(
            [
                "--app", sandbox.store.app + "-pass", "--policy", policy, "--passphrase-file", passphraseFile,
                "session", "put", "other",
            ], input: "second")
        #expect(withPassphrase.status == 0, "\(withPassphrase.stderr)")

        let gitPassword = "git-password-canary-51c2"
        let git = try sandbox.run(
            ["git-credential", "store"],
            input: "protocol=https\nhost=example.com\nusername=bob\npassword=\(gitPassword)\n\n")
        #expect(git.status == 0, "\(git.stderr)")
        let found = try sandbox.run(
            ["git-credential", "get"],
            input: "protocol=https\nhost=example.com\n\n", agent: false)
        #expect(found.text.contains("password=\(gitPassword)"), "\(found.stderr)")

        let received = try listener.received()
        #expect(leaks(of: [token, passphrase, gitPassword], in: received).isEmpty)
        #expect(received.isEmpty, "the client sent nothing: \(received.count) bytes")
    }
}
