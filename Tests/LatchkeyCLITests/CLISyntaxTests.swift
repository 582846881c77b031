import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// The command line as Linux users expect it (issue 17): version and help
/// commands, suggestions for typos, global options anywhere, `--`, defaults from
/// the environment, durations, `--no-newline`, and messages that say what is true.
@Suite("latchkey command-line syntax", .serialized, .sandboxed)
struct CLISyntaxTests {
    /// The variables that would change a test's store or policy, unset so the test's own flags decide.
    static let clean: [String: String?] = [
        "LATCHKEY_BACKEND": nil, "LATCHKEY_POLICY": nil, "LATCHKEY_APP": nil, "LATCHKEY_HOME": nil,
    ]

    @Test(
        "version, --version and -V print the same version, in text and JSON",
        arguments: [["version"], ["--version"], ["-V"], ["status", "-V"]])
    func version(arguments: [String]) throws {
        let run = try latchkey(arguments)
        #expect(run.status == 0 && run.text == "latchkey \(Tool.version)\n", "\(run.stderr)")
        #expect(try latchkey(arguments + ["--json"]).json()["latchkey"] as? String == Tool.version)
    }

    @Test("help and help COMMAND match --help and COMMAND --help; with --json, help is a JSON document")
    func help() throws {
        let tool = try latchkey(["help"])
        #expect(try tool.status == 0 && tool.text == latchkey(["--help"]).text && tool.text.contains("Commands:"))
        let put = try latchkey(["help", "session", "put"])
        #expect(try put.status == 0 && put.text == latchkey(["session", "put", "--help"]).text)
        #expect(
            put.text.contains("--expires-in DURATION")
                && !put.text.contains("Usage: latchkey [global options] session get"))
        #expect(try latchkey(["help", "session"]).text == latchkey(["session", "-h"]).text)

        let group = try latchkey(["--json", "help", "session"]).json()
        let commands = try #require((group["help"] as? [String: Any])?["commands"] as? [[String: Any]])
        #expect(
            commands.compactMap { $0["command"] as? String } == [
                "session put", "session get", "session list", "session delete",
            ])
        let get = try #require(commands.first { $0["command"] as? String == "session get" })
        let options = try #require(get["options"] as? [[String: Any]])
        #expect(options.contains { $0["name"] as? String == "--no-newline" && $0["short"] as? String == "-n" })
        #expect((get["exitStatuses"] as? [[String: Any]])?.first?["status"] as? Int == 1)
        let after = try latchkey(["session", "get", "--help", "--json"]).json()
        #expect(((after["help"] as? [String: Any])?["commands"] as? [[String: Any]])?.count == 1)
        let whole = try #require(try latchkey(["--help", "--json"]).json()["help"] as? [String: Any])
        #expect((whole["commands"] as? [Any])?.count == Command.all.count)
        #expect((whole["exitStatuses"] as? [[String: Any]])?.compactMap { $0["status"] as? Int }.contains(77) == true)
    }

    @Test(
        "a mistyped command, subcommand, option or value exits 64 with the closest valid name",
        arguments: [
            (["sesion"], "`session`"), (["statsu"], "`status`"), (["session", "gett", "a"], "`session get`"),
            (["session", "get", "a", "--acount", "bob"], "`--account`"), (["--jsno", "status"], "`--json`"),
            (["--backend", "fil", "status"], "`file`"), (["help", "sesion"], "`session`"),
            (["completion", "bsah"], "`bash`"),
        ])
    func didYouMean(arguments: [String], suggestion: String) throws {
        let run = try latchkey(arguments)
        #expect(run.status == 64)
        #expect(run.stderr.contains("did you mean \(suggestion)?"), "\(run.stderr)")
        #expect(try latchkey(["--json"] + arguments).errorCode() == "usage")
    }

    @Test("a word close to no valid name gets no suggestion")
    func noSuggestion() throws {
        let run = try latchkey(["frobnicate"])
        #expect(
            run.status == 64 && run.stderr.contains("unknown command 'frobnicate'")
                && !run.stderr.contains("did you mean"))
    }

    @Test(
        "the closest name by edit distance",
        arguments: [
            ("sesion", "session"), ("seesion", "session"), ("sessoin", "session"), ("ses", "session"),
            ("--acount", "--account"),
            ("lgout", "logout"), ("wipee", "wipe"),
        ])
    func closest(typed: String, expected: String) {
        let candidates = Command.groups + ["--account", "--app", "--json"]
        #expect(Suggestion.closest(to: typed, among: candidates) == expected)
    }

    @Test("global options anywhere on the line, before or after the command, and between its words")
    func globalOptionsAnywhere() throws {
        let store = try Store("file")
        let put = try latchkey(
            ["session", "put", "a", "--backend", "file", "--store-dir", store.storeDirectory, "--app", store.app],
            input: "after", environment: Self.clean)
        #expect(put.status == 0, "\(put.stderr)")
        let get = try latchkey(
            ["--app", store.app, "session", "--backend=file", "get", "a", "--store-dir", store.storeDirectory],
            environment: Self.clean)
        #expect(get.status == 0 && get.text == "after\n", "\(get.stderr)")
        // A command's option before the command's words is taken too.
        try store.run(["session", "put", "b", "--account", "bob"], input: "bob's")
        #expect(try store.run(["--account", "bob", "session", "get", "b"]).text == "bob's\n")
        let wrongPlace = try store.run(["--yes", "session", "get", "b"])
        #expect(wrongPlace.status == 64 && wrongPlace.stderr.contains("session get takes no option --yes"))
    }

    @Test("-- ends the options: what follows is an argument, even when it looks like an option")
    func doubleDash() throws {
        let store = try Store("file")
        #expect(try store.run(["session", "put", "--", "-dash"], input: "dashed").status == 0)
        #expect(try store.run(["session", "get", "--", "-dash"]).text == "dashed\n")
        let literal = try store.run(["session", "get", "--", "--json"])
        #expect(literal.status == 1 && !literal.text.hasPrefix("{"), "--json after -- is a session name")
        #expect(try store.run(["session", "put", "-dash"], input: "x").status == 64)
    }

    @Test("LATCHKEY_BACKEND and LATCHKEY_POLICY are defaults; the flags win")
    func environmentDefaults() throws {
        let store = try Store("file")
        let location = ["--store-dir", store.storeDirectory, "--app", store.app]
        var environment = Self.clean
        environment["LATCHKEY_BACKEND"] = "file"
        let byEnvironment = try latchkey(["--json", "status"] + location, environment: environment).json()
        #expect(byEnvironment["backend"] as? String == "file")
        #expect(
            ((byEnvironment["settings"] as? [String: Any])?["backend"] as? [String: Any])?["source"] as? String
                == "environment")
        // The flag wins: LATCHKEY_BACKEND names a store the flag overrides (so no Secret Service is contacted).
        environment["LATCHKEY_BACKEND"] = "secret-service"
        let flagWins = try latchkey(["--json", "status", "--backend", "file"] + location, environment: environment)
            .json()
        #expect(flagWins["backend"] as? String == "file")
        #expect(
            ((flagWins["settings"] as? [String: Any])?["backend"] as? [String: Any])?["source"] as? String == "flag")
        environment["LATCHKEY_BACKEND"] = "file"

        environment["LATCHKEY_POLICY"] = "built-in:strict"
        let strict = try latchkey(["--json", "status"] + location, environment: environment)
        #expect(try strict.status == 77 && strict.errorCode() == "policyDenied", "the strict policy forbids the file")
        #expect(
            try latchkey(["status", "--policy", "built-in:default"] + location, environment: environment).status == 0)
        #expect(
            try latchkey(["--json", "policy", "show"], environment: environment).json()["policy"]
                .flatMap { ($0 as? [String: Any])?["name"] as? String } == "strict")

        environment["LATCHKEY_POLICY"] = "/nonexistent/policy.json"
        let missing = try latchkey(["status"] + location, environment: environment)
        #expect(missing.status == 64 && missing.stderr.contains("LATCHKEY_POLICY"))
        environment["LATCHKEY_POLICY"] = nil
        environment["LATCHKEY_BACKEND"] = "cloud"
        let bad = try latchkey(["status"] + location, environment: environment)
        #expect(bad.status == 64 && bad.stderr.contains("LATCHKEY_BACKEND"))
    }

    @Test("status says where each setting came from: flag, environment, policy file, built-in default")
    func settingSources() throws {
        let store = try Store("file")
        func sources(_ arguments: [String], _ environment: [String: String?]) throws -> [String: String] {
            let run = try latchkey(
                ["--json", "status"] + arguments, environment: Self.clean.merging(environment) { $1 })
            let settings = try #require(try run.json()["settings"] as? [String: [String: Any]], "\(run.stderr)")
            return settings.compactMapValues { $0["source"] as? String }
        }
        #expect(
            try sources(store.options, [:]) == [
                "app": "flag", "policy": "built-in default", "backend": "flag", "storeDirectory": "flag",
            ])
        let config = store.directory + "/config"
        try FileManager.default.createDirectory(atPath: config + "/latchkey", withIntermediateDirectories: true)
        try #"{"version": 1, "name": "mine", "backend": {"kind": "file"}}"#.write(
            toFile: config + "/latchkey/policy.json", atomically: true, encoding: .utf8)
        let fromFile = try sources(
            [], ["XDG_CONFIG_HOME": config, "LATCHKEY_HOME": store.storeDirectory, "LATCHKEY_APP": store.app])
        #expect(
            fromFile == [
                "app": "environment", "policy": "policy file", "backend": "policy file",
                "storeDirectory": "environment",
            ])
        let text = try latchkey(
            ["status", "--policy", "built-in:default"],
            environment: Self.clean.merging(
                ["LATCHKEY_BACKEND": "file", "LATCHKEY_HOME": store.storeDirectory, "LATCHKEY_APP": store.app]) { $1 }
        ).text
        #expect(text.contains("backend choice: file (from environment LATCHKEY_BACKEND)"), "\(text)")
        #expect(
            text.contains("policy: default (from flag --policy)") && text.contains("(from environment LATCHKEY_HOME)"))
    }

    @Test(
        "--expires-in takes seconds and durations such as 90s, 30m, 12h, 7d and 1h30m",
        arguments: [
            ("90", 90), ("90s", 90), ("30m", 1_800), ("12h", 43_200), ("7d", 604_800), ("1h30m", 5_400),
            ("1d2h3m4s", 93_784),
        ])
    func durations(text: String, seconds: Int) throws {
        #expect(Lifetime.seconds(text) == Int64(seconds))
        let store = try Store("file")
        let saved = try store.json(["session", "put", "a", "--expires-in", text], input: "t")
        let expires = try #require((saved["saved"] as? [String: Any])?["expires"] as? String)
        let date = try #require(ISO8601DateFormatter().date(from: expires))
        #expect(abs(date.timeIntervalSinceNow - Double(seconds)) < 120)
    }

    @Test(
        "--expires-in refuses what is not a duration, with a usage error naming it",
        arguments: ["1h1h", "30m1h", "30x", "h", "m30", "1.5h", "-5", "0", "", "1h 30m", "99999999999999999999"])
    func badDurations(text: String) throws {
        let store = try Store("file")
        let run = try store.run(["session", "put", "a", "--expires-in", text], input: "t")
        #expect(
            run.status == 64 && run.stderr.contains("--expires-in") && run.stderr.contains("1h30m"), "\(run.stderr)")
        #expect(try store.run(["session", "get", "a"]).status == 1, "nothing was saved")
    }

    @Test(
        "session get --no-newline (-n) writes the exact bytes stored and nothing else",
        arguments: ["--no-newline", "-n"])
    func noNewline(flag: String) throws {
        let store = try Store("file")
        try store.run(["session", "put", "t"], input: "tok en\n\n")
        #expect(try store.run(["session", "get", "t", flag]).stdout == Data("tok en\n".utf8))
        #expect(try store.run(["session", "get", "t"]).stdout == Data("tok en\n\n".utf8), "the default is unchanged")
        try store.run(["session", "put", "plain"], input: "abc")
        #expect(try store.run([flag, "session", "get", "plain"]).stdout == Data("abc".utf8))
        #expect(try store.json(["session", "get", "plain", flag])["secret"] as? String == "abc")
    }

    // The encrypted file alone: the summaries are the command line's, the same for every store,
    // and the shared test keyring is slow enough under load without more writers.
    @Test("logout and wipe say they kept the username only when one was remembered")
    func truthfulSummaries() throws {
        let store = try Store("file")
        try store.run(["session", "put", "a", "--account", "alice"], input: "t")
        let none = try store.run(["logout", "--account", "alice"])
        #expect(
            none.status == 0 && none.text.contains("no username was remembered")
                && !none.text.contains("kept the username"), "\(none.text)")
        #expect(
            try store.json(["wipe", "--yes"])["summary"] as? String == "wiped 0 sessions; no username was remembered")
        let details = try store.json(["audit", "show"])["entries"] as? [[String: Any]] ?? []
        #expect(
            details.contains { ($0["detail"] as? String)?.hasSuffix("no username was remembered") == true },
            "the audit trail's logout and wipe details say what is true too")
        #expect(!details.contains { ($0["detail"] as? String)?.contains("kept the username") == true })
        try store.run(["username", "set", "alice"])
        let kept = try store.json(["logout"])
        #expect((kept["summary"] as? String)?.contains("kept the username") == true)
        let wiped = try store.run(["wipe", "--yes"]).text
        #expect(wiped.contains("forgot the username") && !wiped.contains("kept the username"))
    }

    @Test("no message names an account or a username")
    func messagesWithoutAccounts() throws {
        let store = try Store("file")
        let account = "account-" + UUID().uuidString.prefix(8)
        let username = "user-" + UUID().uuidString.prefix(8)
        var runs = [
            try store.run(["session", "put", "a", "--account", account], input: "t"),
            try store.run(["session", "get", "missing", "--account", account]),
            try store.run(["session", "delete", "missing", "--account", account]),
            try store.run(["session", "delete", "a", "--account", account]),
            try store.run(["username", "set", username]),
            try store.run(["logout", "--account", account]),
        ]
        try store.run(["remember", "off"])
        runs.append(try store.run(["username", "set", username]))
        #expect(runs.last?.status == 77)
        for run in runs {
            for name in [account, username] {
                #expect(!run.text.contains(name) && !run.stderr.contains(name), "\(run.text)\(run.stderr)")
            }
        }
    }
}
