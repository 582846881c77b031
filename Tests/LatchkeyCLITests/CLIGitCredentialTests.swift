import Foundation
import LatchkeyTestSupport
import Testing

/// The real `git` binary driving the helper through `credential.helper`.
@Suite("git credential helper", .sandboxed)
struct CLIGitCredentialTests {
    /// A git that sees only the configuration given here, and never prompts.
    struct Git {
        let helper: String
        var extraConfig: [String] = []
        var path: String?
        var environment: [String: String?] = [:]

        func run(_ action: String, _ attributes: [String]) throws -> Run {
            var arguments = ["-c", "credential.helper=", "-c", "credential.helper=\(helper)"]
            for setting in extraConfig { arguments += ["-c", setting] }
            var environment: [String: String?] = [
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
                "GIT_ASKPASS": nil, "SSH_ASKPASS": nil,
            ]
            if let path { environment["PATH"] = path }
            environment.merge(self.environment) { $1 }
            let input = attributes.joined(separator: "\n") + "\n\n"
            return try Child("/usr/bin/env", ["git"] + arguments + ["credential", action], environment: environment)
                .finish(writing: Data(input.utf8))
        }

        /// The attributes `fill` returns, or nil when git found nothing (and could not prompt).
        func fill(_ attributes: [String]) throws -> [String: String]? {
            let run = try run("fill", attributes)
            guard run.status == 0 else { return nil }
            var result: [String: String] = [:]
            for line in run.lines {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { result[parts[0]] = parts[1] }
            }
            return result
        }

        func approve(_ attributes: [String]) throws {
            let run = try run("approve", attributes)
            #expect(run.status == 0, "\(run.stderr)")
        }

        func reject(_ attributes: [String]) throws {
            let run = try run("reject", attributes)
            #expect(run.status == 0, "\(run.stderr)")
        }
    }

    private func git(_ store: Store) throws -> Git {
        Git(helper: ([try latchkeyPath()] + store.options + ["git-credential"]).joined(separator: " "))
    }

    @Test("approve then fill; several usernames on one host", arguments: backends)
    func approveFill(backend: String) throws {
        let git = try git(try Store(backend))
        let host = ["protocol=https", "host=git.example.com"]
        try git.approve(host + ["username=bob", "password=bob-pass"])
        try git.approve(host + ["username=carol", "password=carol-pass"])
        #expect(try git.fill(host + ["username=bob"])?["password"] == "bob-pass")
        #expect(try git.fill(host + ["username=carol"])?["password"] == "carol-pass")
        let any = try #require(try git.fill(host))
        #expect(["bob", "carol"].contains(any["username"] ?? ""))
        #expect(try git.fill(["protocol=https", "host=other.example.com", "username=bob"]) == nil)
        #expect(try git.fill(["protocol=http", "host=git.example.com", "username=bob"]) == nil)
        try git.approve(host + ["username=bob", "password=bob-new"])
        #expect(try git.fill(host + ["username=bob"])?["password"] == "bob-new")
    }

    /// The environment of a host with no Secret Service (an SSH session), commands run in-process.
    static let noBus: [String: String?] = [
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "LATCHKEY_AGENT": "off",
    ]

    @Test("on a host without a Secret Service a store is quiet, as git expects of a helper; status says where it went")
    func quietFallback() throws {
        let store = try Store("auto", reachesService: false)
        var git = try git(store)
        git.environment = Self.noBus
        let host = ["protocol=https", "host=git.example.com"]
        for attempt in 1...2 {
            let approve = try git.run("approve", host + ["username=bob", "password=pass-\(attempt)"])
            #expect(approve.status == 0, "\(approve.stderr)")
            #expect(approve.text.isEmpty && approve.stderr.isEmpty, "\(approve.text) \(approve.stderr)")
        }
        // A fill reads and says nothing of it; a store git skips (no password) writes nothing, so says nothing.
        let fill = try git.run("fill", host + ["username=bob"])
        #expect(fill.status == 0)
        #expect(fill.stderr.isEmpty, "\(fill.stderr)")
        let skipped = try git.run("approve", host + ["username=bob"])
        #expect(skipped.stderr.isEmpty, "\(skipped.stderr)")
        let status = try store.run(["status"], environment: Self.noBus)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            status.text.contains("backend: file")
                && status.text.contains("why: no Secret Service (the Secret Service cannot be reached: "),
            "\(status.text)")
    }

    @Test("a store that moves a namespace's credentials from the Secret Service to the file says so, once per move")
    func fallbackFromSecretService() throws {
        try SecretServiceGate.require()
        let store = try Store("auto")
        var git = try git(store)
        let host = ["protocol=https", "host=git.example.com"]
        let notice =
            "latchkey: the git credential was written to the encrypted file \(store.vaultPath), not the Secret Service, where this namespace's credentials were kept until now: the Secret Service cannot be reached: "
        for round in 1...2 {
            git.environment = ["LATCHKEY_AGENT": "off"]
            let kept = try git.run("approve", host + ["username=bob", "password=kept-\(round)"])
            #expect(kept.status == 0 && kept.stderr.isEmpty, "round \(round): \(kept.stderr)")
            git.environment = Self.noBus
            let moved = try git.run("approve", host + ["username=bob", "password=moved-\(round)"])
            #expect(moved.status == 0, "round \(round): \(moved.stderr)")
            #expect(moved.stderr.contains(notice), "round \(round): \(moved.stderr)")
            #expect(!moved.stderr.contains("moved-\(round)") && !moved.stderr.contains("bob"))
            let again = try git.run("approve", host + ["username=bob", "password=again-\(round)"])
            #expect(again.status == 0 && again.stderr.isEmpty, "round \(round): \(again.stderr)")
            #expect(try git.fill(host + ["username=bob"])?["password"] == "again-\(round)")
        }
    }

    @Test("credential.useHttpPath: a credential per path", arguments: backends)
    func paths(backend: String) throws {
        var git = try git(try Store(backend))
        git.extraConfig = ["credential.useHttpPath=true"]
        try git.approve(["url=https://git.example.com/team/a.git", "username=ann", "password=a-pass"])
        try git.approve(["url=https://git.example.com/team/b.git", "username=ben", "password=b-pass"])
        #expect(try git.fill(["url=https://git.example.com/team/a.git"])?["password"] == "a-pass")
        #expect(try git.fill(["url=https://git.example.com/team/b.git"])?["username"] == "ben")
        #expect(try git.fill(["url=https://git.example.com/team/c.git"]) == nil)
    }

    @Test("an expired password is not returned; a future expiry is", arguments: backends)
    func expiry(backend: String) throws {
        let store = try Store(backend)
        let git = try git(store)
        // git 2.39 does not forward password_expiry_utc on approve, so it is stored through the helper directly.
        let past = Int(Date().timeIntervalSince1970) - 60
        let future = Int(Date().timeIntervalSince1970) + 3_600
        let stored = try store.run(
            ["git-credential", "store"],
            input: """
                protocol=https\nhost=old.example.com\nusername=olga\npassword=stale\npassword_expiry_utc=\(past)\n\n
                """)
        #expect(stored.status == 0 && stored.stdout.isEmpty)
        #expect(try git.fill(["protocol=https", "host=old.example.com"]) == nil)
        #expect(
            !(try store.run(["session", "list"]).text.contains("old.example.com")), "an expired password is not stored")
        try store.run(
            ["git-credential", "store"],
            input: """
                protocol=https\nhost=new.example.com\nusername=nina\npassword=fresh\npassword_expiry_utc=\(future)\noauth_refresh_token=refresh-me\n
                """)
        #expect(try git.fill(["protocol=https", "host=new.example.com"])?["password"] == "fresh")
        let got = try store.json(["git-credential", "get"], input: "protocol=https\nhost=new.example.com\n")
        let credential = try #require(got["credential"] as? [String: Any])
        #expect(credential["password_expiry_utc"] as? Int == future)
        #expect(credential["oauth_refresh_token"] as? String == "refresh-me")
        #expect(credential["username"] as? String == "nina")
        let raw = try store.run(["git-credential", "get"], input: "protocol=https\nhost=new.example.com\n")
        #expect(
            raw.lines == [
                "username=nina", "password=fresh", "oauth_refresh_token=refresh-me", "password_expiry_utc=\(future)",
            ])
    }

    @Test("reject erases only the matching credential", arguments: backends)
    func reject(backend: String) throws {
        let git = try git(try Store(backend))
        let host = ["protocol=https", "host=git.example.com"]
        try git.approve(host + ["username=bob", "password=bob-pass"])
        try git.approve(host + ["username=carol", "password=carol-pass"])
        try git.approve(["protocol=https", "host=elsewhere.example.com", "username=bob", "password=bob-elsewhere"])
        try git.reject(host + ["username=bob", "password=not-the-stored-one"])
        #expect(try git.fill(host + ["username=bob"])?["password"] == "bob-pass")
        try git.reject(host + ["username=bob", "password=bob-pass"])
        #expect(try git.fill(host + ["username=bob"]) == nil)
        #expect(try git.fill(host + ["username=carol"])?["password"] == "carol-pass")
        #expect(
            try git.fill(["protocol=https", "host=elsewhere.example.com", "username=bob"])?["password"]
                == "bob-elsewhere")
    }

    @Test("as git-credential-latchkey on PATH: credential.helper=latchkey ...", arguments: backends)
    func onPath(backend: String) throws {
        let store = try Store(backend)
        let bin = store.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: bin + "/git-credential-latchkey", withDestinationPath: try latchkeyPath())
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let git = Git(helper: (["latchkey"] + store.options).joined(separator: " "), path: path)
        try git.approve(["protocol=https", "host=path.example.com", "username=pat", "password=on-path"])
        #expect(try git.fill(["protocol=https", "host=path.example.com"])?["password"] == "on-path")
        // The same binary under its own name, as a full path.
        let direct = Git(helper: ([bin + "/git-credential-latchkey"] + store.options).joined(separator: " "))
        #expect(try direct.fill(["protocol=https", "host=path.example.com"])?["username"] == "pat")
        let listed = try #require(
            try store.json(["session", "list", "--account", "pat"])["sessions"] as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["git:https://path.example.com"])
    }

    @Test("the helper tolerates capability[], wwwauth[], url and unknown attributes, and ignores unknown actions")
    func tolerance() throws {
        let store = try Store("file")
        let stored = try store.run(
            ["git-credential", "store"],
            input: """
                capability[]=authtype\nprotocol=https\nhost=t.example.com\nusername=tom\npassword=tolerant\nwwwauth[]=Basic realm="x"\nfuture_key=1\n
                """)
        #expect(stored.status == 0, "\(stored.stderr)")
        let got = try store.run(
            ["git-credential", "get"], input: "capability[]=authtype\nurl=https://tom@t.example.com\nnew_thing=yes\n\n")
        #expect(got.lines.contains("password=tolerant"))
        let ignored = try store.run(["git-credential", "frobnicate"], input: "protocol=https\nhost=t.example.com\n")
        #expect(ignored.status == 0 && ignored.stdout.isEmpty)
        let malformed = try store.run(["git-credential", "get"], input: "no equals sign\n")
        #expect(malformed.status == 65)
        let nothing = try store.run(["git-credential", "get"], input: "protocol=https\nhost=none.example.com\n")
        #expect(nothing.status == 0 && nothing.stdout.isEmpty)
    }
}
