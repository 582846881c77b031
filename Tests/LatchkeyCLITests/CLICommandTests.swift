import Foundation
import LatchkeyTestSupport
import Testing

@Suite("latchkey commands end to end", .sandboxed)
struct CLICommandTests {
    @Test("username, remember and status, in text and JSON", arguments: backends)
    func usernameAndStatus(backend: String) throws {
        let store = try Store(backend)
        let status = try store.json(["status"])
        #expect(status["backend"] as? String == backend)
        #expect(status["usernameRemembered"] as? Bool == false)
        #expect((status["protection"] as? String)?.isEmpty == false)
        #expect((status["policy"] as? [String: Any])?["name"] as? String == "default")
        #expect(try store.run(["status"]).text.contains("protection: "))

        #expect(try store.json(["username", "get"], status: 1)["error"] != nil)
        #expect(try store.run(["username", "get"]).status == 1)
        #expect(try store.json(["username", "set", "alice"])["remembered"] as? Bool == true)
        #expect(try store.run(["username", "get"]).text == "alice\n")
        #expect(try store.json(["username", "get"])["username"] as? String == "alice")
        #expect(try store.json(["status"])["usernameRemembered"] as? Bool == true)

        #expect(try store.json(["remember", "show"])["remember"] as? Bool == true)
        #expect(try store.json(["remember", "off"])["remember"] as? Bool == false)
        #expect(try store.run(["username", "get"]).status == 1)
        let refused = try store.run(["--json", "username", "set", "alice"])
        #expect(refused.status == 77)
        #expect(try refused.errorCode() == "policyDenied")
        #expect(try store.run(["remember", "show"]).text == "off\n")
        #expect(try store.json(["remember", "on"])["remember"] as? Bool == true)
        try store.run(["username", "set", "bob"])
        #expect(try store.json(["username", "forget"])["forgotten"] as? Bool == true)
        #expect(try store.run(["username", "get"]).status == 1)
    }

    @Test("sessions: put, get, list, delete, expiry cap, accounts", arguments: backends)
    func sessions(backend: String) throws {
        let store = try Store(backend)
        let saved = try store.json(["session", "put", "access", "--expires-in", "3600"], input: "token-one\n")
        let expires = try #require((saved["saved"] as? [String: Any])?["expires"] as? String)
        #expect(ISO8601DateFormatter().date(from: expires).map { abs($0.timeIntervalSinceNow - 3600) < 120 } == true)
        try store.run(["session", "put", "refresh", "--account", "bob"], input: "token\ntwo\n\n")

        #expect(try store.run(["session", "get", "access"]).stdout == Data("token-one\n".utf8))
        #expect(try store.run(["session", "get", "refresh", "--account", "bob"]).text == "token\ntwo\n\n")
        let got = try store.json(["session", "get", "refresh", "--account", "bob"])
        #expect(got["secret"] as? String == "token\ntwo\n")
        #expect((got["session"] as? [String: Any])?["account"] as? String == "bob")

        let listed = try #require(try store.json(["session", "list"])["sessions"] as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["access", "refresh"])
        #expect(listed.allSatisfy { $0["secret"] == nil && $0["expires"] is String })
        #expect(try store.run(["session", "list", "--account", "bob"]).lines.count == 1)

        #expect(try store.json(["session", "delete", "access"])["deleted"] as? Bool == true)
        #expect(try store.json(["session", "delete", "access"])["deleted"] as? Bool == false)
        #expect(try store.run(["session", "get", "access"]).status == 1)
        #expect(try store.run(["session", "put", "empty"], input: "\n").status == 65)
        #expect(try store.run(["session", "put", "x", "--expires-in", "soon"], input: "t").status == 64)
    }

    @Test(
        "named secrets: put from stdin and --from-file, get, list without values, delete; the default logout keeps them, wipe erases them",
        arguments: backends)
    func secrets(backend: String) throws {
        let store = try Store(backend)
        let saved = try store.json(["secret", "put", "api-key"], input: "sk-live-1\n")
        #expect((saved["saved"] as? [String: Any])?["expires"] is NSNull)
        let file = store.directory + "/client-secret"
        try Data("from\nfile\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(chmod(file, 0o600) == 0)
        try store.run(["secret", "put", "client-secret", "--from-file", file])
        #expect(try store.run(["secret", "put", "x", "--from-file", "relative"]).status == 64)
        #expect(try store.run(["secret", "put", "empty"], input: "\n").status == 65)

        #expect(try store.run(["secret", "get", "api-key"]).text == "sk-live-1\n")
        #expect(try store.run(["secret", "get", "client-secret", "-n"]).text == "from\nfile")
        #expect(try store.json(["secret", "get", "api-key"])["value"] as? String == "sk-live-1")
        let listed = try #require(try store.json(["secret", "list"])["secrets"] as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["api-key", "client-secret"])
        #expect(listed.allSatisfy { $0["value"] == nil })
        #expect(try !store.run(["secret", "list"]).text.contains("sk-live-1"))

        let logout = try store.json(["logout"])
        #expect(logout["keptSecrets"] as? Int == 2)
        #expect(try store.json(["secret", "delete", "api-key"])["deleted"] as? Bool == true)
        #expect(try store.json(["secret", "delete", "api-key"])["deleted"] as? Bool == false)
        #expect(try store.run(["secret", "get", "api-key"]).status == 1)
        let wipe = try store.json(["wipe", "--yes"])
        #expect(wipe["wipedSecrets"] as? [String] == ["client-secret"])
        #expect(try store.run(["secret", "get", "client-secret"]).status == 1)
        let trail = try store.run(["audit", "show"]).text
        #expect(trail.contains("secret.saved") && !trail.contains("sk-live-1") && !trail.contains("from\nfile"))
    }

    @Test("logout keeps the username and wipes sessions; wipe erases all; migrate", arguments: backends)
    func logoutWipeMigrate(backend: String) throws {
        let store = try Store(backend)
        try store.run(["username", "set", "alice"])
        try store.run(["session", "put", "access", "--account", "alice"], input: "a")
        try store.run(["session", "put", "access", "--account", "bob"], input: "b")
        let logout = try store.json(["logout", "--account", "alice"])
        #expect((logout["wipedSessions"] as? [[String: Any]])?.map { $0["account"] as? String } == ["alice"])
        #expect(logout["forgotUsername"] as? Bool == false)
        #expect(try store.run(["session", "get", "access", "--account", "bob"]).text == "b\n")
        #expect(try store.run(["username", "get"]).text == "alice\n")

        let refused = try store.run(["wipe"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--yes"))
        #expect(try store.run(["session", "list"]).lines.count == 1)
        let wiped = try store.json(["wipe", "--yes"])
        #expect(wiped["wiped"] as? Bool == true)
        #expect(wiped["forgotUsername"] as? Bool == true)
        #expect(try store.json(["status"])["sessions"] as? Int == 0)

        let migrate = try store.run(["--json", "migrate"])
        if backend == "file" {
            #expect(migrate.status == 69)
            #expect(try migrate.errorCode() == "unavailable")
        } else {
            #expect(migrate.status == 0)
            #expect(try migrate.json()["moved"] as? Int == 0)
        }
    }

    @Test("migrate moves a file vault into the Secret Service", .needsSecretService)
    func migrateFromFile() throws {
        let file = try Store("file")
        try file.run(["session", "put", "access"], input: "moved-token")
        let service = ["--backend", "secret-service", "--store-dir", file.storeDirectory, "--app", file.app]
        // Opening with the default policy copies at once; the file is kept until a later open,
        // in another process at least 10 s after the copy, reads every item back.
        let status = try latchkey(["--json"] + service + ["status"])
        #expect(try status.json()["leftoverFileVault"] as? Bool == true)
        #expect(try status.json()["migrationAwaitingVerification"] as? Bool == true)
        #expect(try latchkey(service + ["status"]).text.contains("(migrated; kept until a later open"))
        #expect(try latchkey(service + ["session", "get", "access"]).text == "moved-token\n")
        let migrate = try latchkey(["--json"] + service + ["migrate"]).json()
        #expect(migrate["moved"] as? Int == 0)
        #expect(migrate["destroyedFileVault"] as? Bool == false)
        #expect(migrate["awaitingVerification"] as? Bool == true)
    }

    @Test("audit show and verify", arguments: backends)
    func audit(backend: String) throws {
        let store = try Store(backend)
        try store.run(["username", "set", "alice"])
        try store.run(["session", "put", "access"], input: "t")
        let entries = try #require(try store.json(["audit", "show"])["entries"] as? [[String: Any]])
        let events = entries.compactMap { $0["event"] as? String }
        #expect(events.contains("username.remembered") && events.contains("session.saved"))
        #expect(entries.allSatisfy { $0["seq"] is Int && $0["mac"] == nil })
        let last = try #require(entries.compactMap { $0["seq"] as? Int }.max())
        let since = try #require(
            try store.json(["audit", "show", "--since", String(last - 1)])["entries"] as? [[String: Any]])
        #expect(since.allSatisfy { ($0["seq"] as? Int ?? 0) > last - 1 })
        let verified = try store.json(["audit", "verify"])
        #expect(verified["intact"] as? Bool == true)
        #expect((verified["trails"] as? [[String: Any]])?.isEmpty == false)
        #expect(try store.run(["audit", "verify"]).text.contains("intact"))
    }

    @Test("policy show, check, --policy and the user's policy file")
    func policy() throws {
        let shown = try latchkey(["--json", "policy", "show"])
        let policy = try #require(try shown.json()["policy"] as? [String: Any])
        #expect(policy["name"] as? String == "default")
        #expect((policy["backend"] as? [String: Any])?["kind"] as? String == "auto")
        let agent = try #require(policy["agent"] as? [String: Any])
        #expect(
            agent["autostart"] as? Bool == true && agent["unlockCacheSeconds"] as? Int == 900
                && agent["idleExitSeconds"] as? Int == 600)
        let strict = try latchkey(["--policy", "built-in:strict", "policy", "show"]).text
        #expect(strict.contains("backend.kind: secret-service"))
        #expect(strict.contains("agent.autostart: true\nagent.unlockCacheSeconds: 0\nagent.idleExitSeconds: 300\n"))

        let directory = try freshDirectory()
        let config = directory + "/config/latchkey"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        let policyText = #"{"version": 1, "name": "mine", "username": {"remember": false}}"#
        try policyText.write(toFile: config + "/policy.json", atomically: true, encoding: .utf8)
        let user = try latchkey(["--json", "policy", "show"], environment: ["XDG_CONFIG_HOME": directory + "/config"])
        #expect((try user.json()["policy"] as? [String: Any])?["name"] as? String == "mine")
        let checked = try latchkey(["--json", "policy", "check", config + "/policy.json"])
        #expect(try checked.json()["valid"] as? Bool == true)
        #expect(
            try latchkey(["--policy", config + "/policy.json", "policy", "show"]).text.contains(
                "username.remember: false"))
    }

    @Test("demo: a narrated walk-through that verifies its trail")
    func demo() throws {
        let run = try latchkey(["demo"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.text.contains("Logged out under policy 'default'"))
        #expect(run.text.contains("intact"))
        let json = try latchkey(["--json", "demo"]).json()
        #expect(json["auditIntact"] as? Bool == true)
        #expect((json["steps"] as? [String])?.count ?? 0 >= 9)
    }

    @Test("--help for the tool and every command, --version")
    func help() throws {
        let tool = try latchkey(["--help"])
        #expect(tool.status == 0)
        #expect(tool.text.contains("Exit status") && tool.text.contains("77") && tool.stderr.isEmpty)
        for word in [
            "status", "username", "remember", "session", "logout", "wipe", "migrate", "audit", "policy",
            "git-credential", "demo",
        ] {
            let help = try latchkey([word, "--help"])
            #expect(help.status == 0 && help.text.contains("Usage: latchkey [global options] \(word)"), "\(word)")
        }
        #expect(try latchkey(["session", "put", "--help"]).status == 0)
        #expect(try latchkey(["--version"]).text == "latchkey 0.1.0\n")
        #expect(try latchkey(["--json", "--version"]).json()["latchkey"] as? String == "0.1.0")
    }

    @Test(
        "usage errors: a message, a Usage line, exit 64, and a JSON error document",
        arguments: [
            ["bogus"], ["session"], ["session", "get"], ["session", "get", "a", "b"], ["--app"],
            ["sesion"], ["status", "--expires-in", "1h"], ["--backend", "cloud", "status"], ["logout", "--frobnicate"],
            ["bogus", "--help"], ["--policy", "/nonexistent/policy.json", "status"],
            ["--app", "bad id", "status"],
        ])
    func usage(arguments: [String]) throws {
        let run = try latchkey(arguments)
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("latchkey: ") && run.stderr.contains("\nUsage: "))
        #expect(run.stdout.isEmpty)
        #expect(try latchkey(["--json"] + arguments).errorCode() == "usage")
        if arguments != ["--app"] { // there, a trailing --json would be the app id
            #expect(try latchkey(arguments + ["--json"]).errorCode() == "usage", "--json after the command")
        }
    }
}
