import Foundation
import LatchkeyTestSupport
import Testing

/// What text output and error messages may show (issue 14, items 12 and 13).
@Suite("latchkey text output and errors", .sandboxed)
struct CLIHardeningOutputTests {
    @Test("names and accounts with control characters are escaped in text output: no forged rows, no terminal escapes")
    func controlCharactersEscaped() throws {
        let store = try Store("file")
        let name = "evil\nforged\taccount root\tsaved 2020\u{1B}[31m"
        let account = "acct\u{1B}]0;title\u{07}\u{202E}"
        let put = try store.run(["session", "put", name, "--account", account], input: "token")
        #expect(put.status == 0, "\(put.stderr)")
        #expect(try store.run(["session", "put", "plain"], input: "token").status == 0)
        let outputs = [
            put, try store.run(["session", "list"]), try store.run(["session", "delete", name, "--account", account]),
            try store.run(["audit", "show"]), try store.run(["logout"]),
        ]
        for run in outputs {
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!run.stdout.contains(0x1B) && !run.stdout.contains(0x07), "\(run.text)")
            #expect(!run.text.contains("\u{202E}"))
        }
        let listed = outputs[1].lines
        #expect(listed.count == 2, "one line per session: \(listed)")
        #expect(
            listed.contains {
                $0.hasPrefix(
                    "evil\\nforged\\taccount root\\tsaved 2020\\e[31m\taccount acct\\e]0;title\\x07\\u{202E}\t")
            }, "\(listed)")
        #expect(put.text.hasPrefix("saved session evil\\nforged"))
    }

    @Test("no error message, in text or JSON, names an account, a username or a value (canaries over every error path)")
    func canaryOverErrors() throws {
        let account = "CANARY-acct-7f3a"
        let username = "CANARY-user-9b1c"
        let token = "CANARY-token-c4d2"
        let canaries = [account, username, token]
        let store = try Store("file")
        let (policy, _) = try CLIExitStatusTests.passphraseSetup(store, passphrase: "right")
        #expect(try store.run(["session", "put", "s", "--account", account], input: token).status == 0)
        #expect(try store.run(["username", "set", username]).status == 0)

        var failures: [(Store, [String], String)] = [
            (store, ["session", "get", "missing", "--account", account], ""),
            (store, ["session", "put", "s", "--account", account], ""),
            (store, ["username", "set", username, username], ""),
            (store, ["session", "get", "s", "--account", account, account], ""),
            (
                store, ["git-credential", "get"],
                "protocol=https\nhost=h\nusername=\(username)\npassword=\(token)\nbroken line\n\n"
            ),
            (store, ["git-credential", "get"], "username=\(username)\nurl=\(username):\(token)@host\n\n"),
            (
                store, ["--policy", policy, "--passphrase-fd", "0", "session", "get", "s", "--account", account],
                "wrong"
            ),
            (try Store("secret-service", reachesService: false), ["logout", "--account", account], ""),
        ]
        let optedOut = try Store("file")
        #expect(try optedOut.run(["remember", "off"]).status == 0)
        failures.append((optedOut, ["username", "set", username], ""))

        let tampered = try Store("file")
        #expect(try tampered.run(["session", "put", "s", "--account", account], input: token).status == 0)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: tampered.namespaceFile("credentials.vault")))
        bytes[bytes.count - 1] ^= 1
        try bytes.write(to: URL(fileURLWithPath: tampered.namespaceFile("credentials.vault")))
        failures.append((tampered, ["session", "get", "s", "--account", account], ""))
        failures.append((tampered, ["logout", "--account", account], ""))

        let exposed = try Store("file")
        #expect(try exposed.run(["session", "put", "s", "--account", account], input: token).status == 0)
        try setMode(exposed.namespaceFile("credentials.vault"), 0o644)
        failures.append((exposed, ["session", "delete", "s", "--account", account], ""))

        for (store, arguments, input) in failures {
            var environment: [String: String?] = [:]
            if store.backend == "secret-service" {
                environment = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "XDG_RUNTIME_DIR": nil]
            }
            for json in [false, true] {
                let run = try store.run((json ? ["--json"] : []) + arguments, input: input, environment: environment)
                #expect(run.status != 0, "\(arguments) should fail")
                let leaked = canaries.filter { run.stderr.contains($0) || run.text.contains($0) }
                #expect(leaked.isEmpty, "\(arguments): \(leaked) in \(run.stderr) \(run.text)")
            }
        }
    }
}
