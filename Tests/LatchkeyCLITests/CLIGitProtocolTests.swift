import Foundation
import LatchkeyTestSupport
import Testing

/// git's credential-helper protocol to the letter (issue 16), through the built
/// binary on both backends: what gitcredentials(7) and git's own helper tests
/// require of every helper.
@Suite("git credential protocol", .serialized, .sandboxed)
struct CLIGitProtocolTests {
    /// One helper action with `lines` (and the blank line that ends a message) on standard input.
    private func helper(_ store: Store, _ action: String, _ lines: [String]) throws -> Run {
        try store.run(["git-credential", action], input: lines.joined(separator: "\n") + "\n\n")
    }

    private let host = ["protocol=https", "host=git.example.com"]

    @Test(
        "password_expiry_utc is answered only when git gave one, unchanged; the policy's cap stays inside",
        arguments: backends)
    func expiryOnlyAsGiven(backend: String) throws {
        let store = try Store(backend)
        #expect(try helper(store, "store", host + ["username=ann", "password=no-expiry"]).status == 0)
        #expect(try helper(store, "get", host + ["username=ann"]).lines == ["username=ann", "password=no-expiry"])
        #expect(
            try helper(store, "store", host + ["username=bo", "password=far", "password_expiry_utc=9999999999"]).status
                == 0)
        #expect(
            try helper(store, "get", host + ["username=bo"]).lines == [
                "username=bo", "password=far", "password_expiry_utc=9999999999",
            ])
        // Inside Latchkey the session still ends at the policy's cap (30 days by default), and says so.
        let listed = try #require(
            try store.json(["session", "list", "--account", "bo"])["sessions"] as? [[String: Any]])
        let expires = try #require(listed.first?["expires"] as? String)
        let capped = try #require(ISO8601DateFormatter().date(from: expires))
        #expect(capped.timeIntervalSinceNow > 29 * 86_400 && capped.timeIntervalSinceNow < 31 * 86_400)
    }

    @Test("password_expiry_utc=0 means no expiry", arguments: backends)
    func zeroExpiry(backend: String) throws {
        let store = try Store(backend)
        #expect(
            try helper(store, "store", host + ["username=zed", "password=forever", "password_expiry_utc=0"]).status == 0
        )
        #expect(try helper(store, "get", host).lines == ["username=zed", "password=forever"])
    }

    @Test("an empty username is stored and returned as such", arguments: backends)
    func emptyUsername(backend: String) throws {
        let store = try Store(backend)
        #expect(try helper(store, "store", host + ["username=", "password=token-only"]).status == 0)
        #expect(try helper(store, "get", host).lines == ["username=", "password=token-only"])
        #expect(try helper(store, "get", host + ["username="]).lines == ["username=", "password=token-only"])
        #expect(try helper(store, "get", host + ["username=someone"]).stdout.isEmpty)
        // Through git itself, as git's t0303 "helper can store empty username" does.
        let git = CLIGitCredentialTests.Git(
            helper: ([try latchkeyPath()] + store.options + ["git-credential"]).joined(separator: " "))
        let filled = try git.run("fill", ["protocol=https", "host=git.example.com"])
        #expect(
            filled.status == 0 && filled.lines.contains("username=") && filled.lines.contains("password=token-only"),
            "\(filled.stderr)")
        try git.reject(["protocol=https", "host=git.example.com", "username=", "password=token-only"])
        #expect(try helper(store, "get", host).stdout.isEmpty)
    }

    @Test(
        "answers in git's order; capability[], wwwauth[], state[] and unknown keys are tolerated and never stored",
        arguments: backends)
    func orderAndTolerance(backend: String) throws {
        let store = try Store(backend)
        let stored = try helper(
            store, "store",
            ["capability[]=authtype", "capability[]=state"] + host + [
                "username=ord", "password=pw-ord", "password_expiry_utc=4102444800", "oauth_refresh_token=rt-ord",
                "wwwauth[]=Basic realm=\"canary-realm\"", "state[]=canary-state", "future_key=canary-future",
            ])
        #expect(stored.status == 0, "\(stored.stderr)")
        let got = try helper(
            store, "get",
            ["capability[]=authtype", "wwwauth[]=Basic realm=\"x\"", "state[]=s"] + host + ["new_thing=1"])
        #expect(
            got.lines == [
                "username=ord", "password=pw-ord", "oauth_refresh_token=rt-ord", "password_expiry_utc=4102444800",
            ])
        let names = try #require(try store.json(["session", "list"])["sessions"] as? [[String: Any]]).compactMap {
            $0["name"] as? String
        }
        #expect(
            Set(names) == [
                "git:https://git.example.com", "git-refresh:https://git.example.com",
                "git-index:https://git.example.com", "git-index",
            ])
        for name in names {
            for account in ["", "ord"] {
                let value = try store.run(["session", "get", name, "--account", account]).text
                #expect(!value.contains("canary"), "\(name) holds an attribute that must not be stored")
            }
        }
    }

    @Test("an unparseable url is refused and never matches every host", arguments: backends)
    func unparseableURL(backend: String) throws {
        let store = try Store(backend)
        #expect(try helper(store, "store", host + ["username=url", "password=kept"]).status == 0)
        for url in ["url=git.example.com", "url=://git.example.com", "url=https%3A//git.example.com"] {
            let got = try helper(store, "get", [url])
            #expect(got.status == 65 && got.stdout.isEmpty, "\(url)")
            #expect(try helper(store, "erase", [url]).status == 65)
        }
        #expect(try helper(store, "get", ["url=https://git.example.com"]).lines == ["username=url", "password=kept"])
        #expect(
            try helper(store, "get", ["url=https://url@git.example.com/"]).lines == ["username=url", "password=kept"])
    }

    @Test(
        "get reads only the sessions of the request's host, and records one read: the credential's (its index is bookkeeping)",
        arguments: backends)
    func directLookup(backend: String) throws {
        let store = try Store(backend)
        for number in 1...5 {
            #expect(
                try helper(
                    store, "store",
                    ["protocol=https", "host=h\(number).example", "username=u\(number)", "password=p\(number)"]
                ).status == 0)
        }
        let entries = { try #require(try store.json(["audit", "show"])["entries"] as? [[String: Any]]) }
        let before = try entries().count
        #expect(
            try helper(store, "get", ["protocol=https", "host=h3.example"]).lines == ["username=u3", "password=p3"])
        let read = try entries().dropFirst(before).compactMap { $0["detail"] as? String }
        #expect(read == ["git:https://h3.example"])
    }

    @Test("credentials stored under Latchkey 0.1's names are found, and indexed once", arguments: backends)
    func legacyNames(backend: String) throws {
        let store = try Store(backend)
        #expect(
            try store.run(["session", "put", "git:https://legacy.example", "--account", "lee"], input: "old-pass")
                .status == 0)
        #expect(
            try store.run(
                ["session", "put", "git-refresh:https://legacy.example", "--account", "lee"], input: "old-refresh"
            ).status == 0)
        #expect(
            try store.run(
                ["session", "put", "git:https://legacy.example/team/x.git", "--account", "pat"], input: "path-pass"
            ).status == 0)
        #expect(
            try helper(store, "get", ["protocol=https", "host=legacy.example", "username=lee"]).lines
                == ["username=lee", "password=old-pass", "oauth_refresh_token=old-refresh"])
        #expect(
            try helper(store, "get", ["url=https://legacy.example/team/x.git"]).lines == [
                "username=pat", "password=path-pass",
            ])
        let names = try #require(try store.json(["session", "list", "--account", ""])["sessions"] as? [[String: Any]])
            .compactMap { $0["name"] as? String }
        #expect(names == ["git-index", "git-index:https://legacy.example"])
        // A new credential joins the index; an erase leaves the other.
        #expect(
            try helper(store, "store", ["protocol=https", "host=legacy.example", "username=new", "password=new-pass"])
                .status == 0)
        #expect(
            try helper(store, "get", ["protocol=https", "host=legacy.example"]).lines == [
                "username=new", "password=new-pass",
            ])
        #expect(try helper(store, "erase", ["protocol=https", "host=legacy.example", "username=new"]).status == 0)
        #expect(
            ["username=lee", "username=pat"].contains(
                try helper(store, "get", ["protocol=https", "host=legacy.example"]).lines.first ?? ""))
    }

    @Test("a logout wipes git credentials as any session; the index forgets them", arguments: backends)
    func logout(backend: String) throws {
        let store = try Store(backend)
        #expect(try helper(store, "store", host + ["username=out", "password=gone"]).status == 0)
        #expect(try helper(store, "store", host + ["username=stay", "password=kept"]).status == 0)
        #expect(try store.run(["logout", "--account", "out"]).status == 0)
        #expect(try helper(store, "get", host + ["username=out"]).stdout.isEmpty)
        #expect(try helper(store, "get", host).lines == ["username=stay", "password=kept"])
        #expect(try store.run(["logout"]).status == 0)
        #expect(try helper(store, "get", host).stdout.isEmpty)
        #expect(try helper(store, "store", host + ["username=back", "password=again"]).status == 0)
        #expect(try helper(store, "get", host).lines == ["username=back", "password=again"])
    }
}
