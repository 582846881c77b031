import Foundation
import LatchkeyTestSupport
import Testing

/// docker's credential-helper protocol through the built binary invoked as
/// `docker-credential-latchkey`, on both backends (issue 16).
@Suite("docker credential helper", .serialized, .sandboxed)
struct CLIDockerCredentialTests {
    @Test("store, get, list and erase; a scheme or trailing slash does not make another registry", arguments: backends)
    func roundTrip(backend: String) throws {
        let docker = try DockerHelper(try Store(backend))
        #expect(try docker.get("registry.example:5000") == nil)
        try docker.store("https://registry.example:5000/", "alice", "alice-secret")
        try docker.store("https://index.docker.io/v1/", "bob", "bob-secret")
        let exact = try docker.run("get", input: "registry.example:5000")
        #expect(
            exact.text == #"{"ServerURL":"registry.example:5000","Username":"alice","Secret":"alice-secret"}"# + "\n")
        for spelling in [
            "https://registry.example:5000", "http://REGISTRY.example:5000//", " registry.example:5000/ \n",
        ] {
            #expect(try docker.get(spelling)?["Secret"] == "alice-secret", "\(spelling)")
        }
        #expect(try docker.get("registry.example") == nil) // another port is another registry
        #expect(try docker.get("https://index.docker.io/v1/")?["Username"] == "bob")
        #expect(try docker.list() == ["https://registry.example:5000/": "alice", "https://index.docker.io/v1/": "bob"])
        // A new login to the same registry replaces the old credential, whatever the spelling.
        try docker.store("registry.example:5000", "carol", "carol-secret")
        #expect(try docker.list() == ["registry.example:5000": "carol", "https://index.docker.io/v1/": "bob"])
        #expect(try docker.run("erase", input: "https://registry.example:5000/").status == 0)
        #expect(try docker.get("registry.example:5000") == nil)
        // erasing what is not there succeeds
        #expect(try docker.run("erase", input: "registry.example:5000").status == 0)
        #expect(try docker.list() == ["https://index.docker.io/v1/": "bob"])
    }

    @Test("on a host without a Secret Service a store is quiet; one that moves credentials from it says so once")
    func quietFallback() throws {
        let store = try Store("auto", reachesService: false)
        let docker = try DockerHelper(store)
        let noBus: [String: String?] = [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "LATCHKEY_AGENT": "off",
        ]
        for attempt in 1...2 {
            let run = try docker.run(
                "store", input: #"{"ServerURL":"registry.example","Username":"alice","Secret":"s-\#(attempt)"}"#,
                environment: noBus)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.isEmpty && run.stderr.isEmpty, "\(run.text) \(run.stderr)")
        }
        let get = try docker.run("get", input: "registry.example\n", environment: noBus)
        #expect(get.status == 0)
        #expect(get.stderr.isEmpty, "\(get.stderr)")
        try SecretServiceGate.require()
        // The Secret Service is back: the credentials move there; then it is gone again.
        try docker.store("registry.example", "alice", "in-the-keyring")
        let moved = try docker.run(
            "store", input: #"{"ServerURL":"registry.example","Username":"alice","Secret":"moved-secret"}"#,
            environment: noBus)
        #expect(moved.status == 0 && moved.stdout.isEmpty, "\(moved.text)")
        #expect(
            moved.stderr.contains(
                "latchkey: the docker credential was written to the encrypted file \(store.vaultPath), not the Secret Service, where this namespace's credentials were kept until now: "
            ), "\(moved.stderr)")
        #expect(!moved.stderr.contains("moved-secret") && !moved.stderr.contains("alice"))
    }

    @Test("a server URL whose authority Go's net/url refuses neither returns nor erases another registry's credential")
    func authorityNotReinterpreted() throws {
        let docker = try DockerHelper(try Store("file"))
        try docker.store("https://registry.example.com", "alice", "alice-secret")
        for action in ["get", "erase"] {
            let run = try docker.run(action, input: #"https://evil.com\@registry.example.com"#)
            #expect(run.status == 65, "\(action): \(run.stderr)")
            #expect(!run.text.contains("alice-secret"), "\(action)")
        }
        #expect(try docker.get("registry.example.com")?["Secret"] == "alice-secret", "the credential stays")
    }

    @Test("a repeated key in store's input is read as docker's Go helpers read it: the last one, in any case")
    func repeatedKeys() throws {
        let docker = try DockerHelper(try Store("file"))
        let run = try docker.run(
            "store",
            input:
                #"{"ServerURL":"r.example","Username":"first","Secret":"first-secret","Username":"last","secret":"last-secret"}"#
        )
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try docker.get("r.example") == ["ServerURL": "r.example", "Username": "last", "Secret": "last-secret"])
    }

    @Test("the identity token docker uses (Username <token>) is kept and returned", arguments: backends)
    func identityToken(backend: String) throws {
        let docker = try DockerHelper(try Store(backend))
        try docker.store("https://index.docker.io/v1/", "<token>", "identity-token-value")
        #expect(
            try docker.get("https://index.docker.io/v1/") == [
                "ServerURL": "https://index.docker.io/v1/", "Username": "<token>", "Secret": "identity-token-value",
            ])
    }

    @Test("docker credentials are sessions: the policy's cap, the audit trail and logout apply", arguments: backends)
    func sessions(backend: String) throws {
        let store = try Store(backend)
        let docker = try DockerHelper(store)
        try docker.store("registry.example", "dora", "dora-secret")
        let listed = try #require(try store.json(["session", "list"])["sessions"] as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["docker:registry.example"])
        #expect(listed.first?["account"] as? String == "dora")
        #expect(listed.first?["expires"] is String) // the policy caps every session's life
        let events = try #require(try store.json(["audit", "show"])["entries"] as? [[String: Any]]).compactMap {
            $0["event"] as? String
        }
        #expect(events.contains("session.saved"))
        let trail = try store.run(["audit", "show"]).text
        #expect(!trail.contains("dora") && !trail.contains("dora-secret"))
        #expect(try store.run(["logout", "--account", "dora"]).status == 0)
        #expect(try docker.get("registry.example") == nil)
    }

    @Test("the app is docker unless --app or LATCHKEY_APP says otherwise")
    func defaultApp() throws {
        let store = try Store("file")
        let docker = try DockerHelper(store)
        let options = ["--backend", "file", "--store-dir", store.storeDirectory]
        let stored = try docker.run(
            "store", input: #"{"ServerURL":"r.example","Username":"u","Secret":"s"}"#,
            options: options, environment: ["LATCHKEY_APP": nil])
        #expect(stored.status == 0, "\(stored.stderr)")
        let session = try latchkey(
            options + ["--app", "docker", "session", "get", "docker:r.example", "--account", "u"])
        #expect(session.text == "s\n")
        let elsewhere = try docker.run(
            "get", input: "r.example", options: options, environment: ["LATCHKEY_APP": store.app])
        #expect(elsewhere.status == 1)
    }

    @Test("version, and an unknown action is a usage error")
    func versionAndUsage() throws {
        let docker = try DockerHelper(try Store("file"))
        let version = try docker.run("version")
        #expect(version.status == 0 && version.text.hasPrefix("docker-credential-latchkey (latchkey) "))
        let unknown = try docker.run("frobnicate")
        #expect(unknown.status == 64 && unknown.text.contains("unknown docker credential action"))
    }

    static let malformed: [(input: String, message: String)] = [
        ("not json canary-secret", "not valid JSON"),
        (#"["ServerURL","canary-secret"]"#, "not a JSON object"),
        (#"{"ServerURL":"r.example","Username":"u"}"#, "no 'Secret' field"),
        (#"{"Username":"u","Secret":"canary-secret"}"#, "no 'ServerURL' field"),
        (#"{"ServerURL":"r.example","Secret":"canary-secret"}"#, "no 'Username' field"),
        (#"{"ServerURL":"r.example","Username":"u","Secret":42}"#, "'Secret' field is not a string"),
        (#"{"ServerURL":"r.example","Username":null,"Secret":"canary-secret"}"#, "'Username' field is null"),
        (#"{"ServerURL":"","Username":"u","Secret":"canary-secret"}"#, "no credentials server URL"),
        (#"{"ServerURL":"r.example","Username":"","Secret":"canary-secret"}"#, "no credentials username"),
        (#"{"ServerURL":"r.example","Username":"u","Secret":""}"#, "no credentials secret"),
        (#"{"ServerURL":"ftp://r.example","Username":"u","Secret":"canary-secret"}"#, "scheme is not http or https"),
        (#"{"ServerURL":"https:///v2","Username":"u","Secret":"canary-secret"}"#, "no hostname"),
        (#"{"ServerURL":"r.example","Username":"u","Secret":"canary-secret""#, "not valid JSON"),
        (
            #"{"ServerURL":"r.example","Username":"u","Secret":"canary-secret"}"#
                + String(repeating: " ", count: 2 << 20), "longer than"
        ),
    ]

    @Test(
        "malformed store input: a clear error naming the problem, never the secret, and nothing stored",
        arguments: backends)
    func malformedStore(backend: String) throws {
        let docker = try DockerHelper(try Store(backend))
        for (input, message) in Self.malformed {
            let run = try docker.run("store", input: input)
            #expect(run.status == 65, "\(message)")
            #expect(run.text.contains(message) && run.stderr.contains(message), "\(run.text) \(run.stderr)")
            #expect(!run.text.contains("canary") && !run.stderr.contains("canary"))
        }
        #expect(try docker.list() == [:])
    }

    @Test(
        "malformed get and erase input is refused",
        arguments: ["", "ftp://r.example", "https://", String(repeating: "r", count: 3000)])
    func malformedGet(serverURL: String) throws {
        let docker = try DockerHelper(try Store("file"))
        try docker.store("r.example", "u", "s")
        for action in ["get", "erase"] {
            let run = try docker.run(action, input: serverURL)
            #expect(run.status == 65 && !run.text.isEmpty, "\(action): \(run.text)")
        }
        #expect(try docker.list() == ["r.example": "u"])
    }
}
