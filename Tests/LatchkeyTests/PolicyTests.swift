import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The repository's top-level directory, found from this file's path.
let repositoryRoot: String = {
    var path = #filePath
    for _ in 0..<3 { path = PrivateFiles.directoryName(of: path) }
    return path
}()

@Suite("Policy", .sandboxed)
struct PolicyTests {
    static let shipped: [(file: String, embedded: String, policy: Policy)] = [
        ("default.json", Policy.defaultJSON, .default),
        ("strict.json", Policy.strictJSON, .strict),
        ("shared-device.json", Policy.sharedDeviceJSON, .sharedDevice),
    ]

    @Test("every file in policy/ loads", arguments: ["default.json", "strict.json", "shared-device.json"])
    func shippedFilesLoad(file: String) throws {
        let entries = try POSIX.directoryEntries(repositoryRoot + "/policy").filter {
            $0.hasSuffix(".json") && $0 != "policy.schema.json"
        }
        #expect(entries.sorted() == ["default.json", "shared-device.json", "strict.json"])
        let policy = try Policy(contentsOfFile: repositoryRoot + "/policy/" + file)
        #expect(policy.source.hasSuffix("policy/" + file))
        #expect(policy.name + ".json" == file)
    }

    @Test("the embedded policies equal the files in policy/ byte for byte and as parsed", arguments: 0..<3)
    func embeddedCopiesMatchFiles(index: Int) throws {
        let (file, embedded, policy) = Self.shipped[index]
        let bytes = try POSIX.File.open(repositoryRoot + "/policy/" + file, .read).readAll()
        #expect(bytes == Array(embedded.utf8), "policy/\(file) and its embedded copy in Policy+Shipped.swift differ")
        #expect(try Policy(jsonData: bytes, source: file) == policy)
        #expect(Policy.builtIn(named: policy.name) == policy)
    }

    @Test("policy.schema.json is a JSON document that lists every top-level key the parser accepts")
    func schemaParses() throws {
        let bytes = try POSIX.File.open(repositoryRoot + "/policy/policy.schema.json", .read).readAll()
        guard case .object(let schema) = try JSONValue.parse(bytes, source: "policy.schema.json"),
            case .object(let properties) = schema["properties"]
        else {
            Issue.record("the schema has no properties object")
            return
        }
        #expect(
            properties.keys.sorted() == [
                "agent", "audit", "backend", "file", "name", "onLogout", "secrets", "sessions", "username", "version",
            ])
    }

    @Test("the shipped policies mean what DESIGN.md says")
    func shippedMeaning() {
        let standard = Policy.default
        #expect(standard.remembersUsernames && standard.sessionMaxAge == 30 * 86_400)
        #expect(standard.sessionsOnLogout == .wipe && standard.usernameOnLogout == .keep)
        #expect(standard.backend == .auto && standard.allowsFileFallback && standard.fileKeySource == .keyfile)
        #expect(standard.secretServiceTimeout == 3 && standard.audit.failureMode == .fail)

        let strict = Policy.strict
        #expect(strict.backend == .secretService && !strict.allowsFileFallback && strict.fileKeySource == nil)
        #expect(strict.sessionsOnLogout == .wipe && strict.usernameOnLogout == .forget)
        #expect(strict.sessionMaxAge <= 86_400)
        #expect(!strict.fileFallbackDecision(reason: "no session bus").isAllowed)

        #expect(standard.secretMaxAge == nil && standard.secretsOnLogout == .keep)
        #expect(strict.secretMaxAge == nil && strict.secretsOnLogout == .wipe)

        let shared = Policy.sharedDevice
        #expect(!shared.remembersUsernames && shared.wipesSessionsOnExit)
        #expect(shared.secretMaxAge == nil && shared.secretsOnLogout == .wipe)
        #expect(shared.sessionsOnLogout == .wipe && shared.usernameOnLogout == .forget)

        #expect(standard.agent == Policy.AgentRules(autostarts: true, unlockCacheDuration: 900, idleTimeout: 600))
        #expect(standard.agent == .standard)
        #expect(strict.agent == Policy.AgentRules(autostarts: true, unlockCacheDuration: 0, idleTimeout: 300))
        #expect(shared.agent == Policy.AgentRules(autostarts: true, unlockCacheDuration: 60, idleTimeout: 120))
    }

    @Test("absent optional keys take the documented defaults, derived ones included")
    func defaults() throws {
        let minimal = try Policy(jsonData: Array(#"{"version": 1, "name": "minimal"}"#.utf8), source: "minimal.json")
        var expected = Policy.default
        expected.name = "minimal"
        #expect(minimal == expected)

        let secretServiceOnly = try Policy(
            jsonData: Array(#"{"version": 1, "name": "ss", "backend": {"kind": "secret-service"}}"#.utf8),
            source: "ss.json")
        #expect(
            !secretServiceOnly.allowsFileFallback && secretServiceOnly.fileKeySource == nil
                && secretServiceOnly.migratesToSecretService)

        let fileOnly = try Policy(
            jsonData: Array(
                #"{"version": 1, "name": "f", "backend": {"kind": "file"}, "file": {"keySource": "passphrase"}}"#.utf8),
            source: "f.json")
        #expect(fileOnly.allowsFileFallback && !fileOnly.migratesToSecretService && fileOnly.kdf == .standard)

        let forgetful = try Policy(
            jsonData: Array(
                #"{"version": 1, "name": "n", "username": {"remember": false}, "audit": {"maxEntries": null, "maxAgeDays": null}}"#
                    .utf8), source: "n.json")
        #expect(forgetful.usernameOnLogout == .forget && forgetful.audit.retention == .unbounded)

        #expect(
            minimal.agent.autostarts && minimal.agent.unlockCacheDuration == 900 && minimal.agent.idleTimeout == 600)
        let secrets = try Policy(
            jsonData: Array(#"{"version": 1, "name": "s", "secrets": {"maxAgeSeconds": 90, "onLogout": "wipe"}}"#.utf8),
            source: "s.json")
        #expect(secrets.secretMaxAge == 90 && secrets.secretsOnLogout == .wipe && secrets.sessionMaxAge == 2_592_000)
        let unlimited = try Policy(
            jsonData: Array(#"{"version": 1, "name": "u", "secrets": {"maxAgeSeconds": null}}"#.utf8), source: "u.json")
        #expect(unlimited.secretMaxAge == nil && unlimited.secretsOnLogout == .keep)
        let emptyAgent = try Policy(
            jsonData: Array(#"{"version": 1, "name": "a", "agent": {}}"#.utf8), source: "a.json")
        #expect(emptyAgent.agent == .standard)
    }

    @Test(
        "the agent section is read key by key, each absent key taking its default",
        arguments: [
            (
                #"{"autostart": false}"#,
                Policy.AgentRules(autostarts: false, unlockCacheDuration: 900, idleTimeout: 600)
            ),
            (
                #"{"unlockCacheSeconds": 0}"#,
                Policy.AgentRules(autostarts: true, unlockCacheDuration: 0, idleTimeout: 600)
            ),
            (
                #"{"unlockCacheSeconds": 86400}"#,
                Policy.AgentRules(autostarts: true, unlockCacheDuration: 86_400, idleTimeout: 600)
            ),
            (#"{"idleExitSeconds": 1}"#, Policy.AgentRules(autostarts: true, unlockCacheDuration: 900, idleTimeout: 1)),
            (
                #"{"secretServiceClientCollections": false}"#,
                Policy.AgentRules(
                    autostarts: true, unlockCacheDuration: 900, idleTimeout: 600, allowsClientCollections: false)
            ),
            (
                #"{"serveSecretService": true}"#,
                Policy.AgentRules(
                    autostarts: true, unlockCacheDuration: 900, idleTimeout: 600, servesSecretService: true)
            ),
            (
                #"{"autostart": false, "unlockCacheSeconds": 30, "idleExitSeconds": 86400}"#,
                Policy.AgentRules(autostarts: false, unlockCacheDuration: 30, idleTimeout: 86_400)
            ),
        ])
    func agentSection(section: String, expected: Policy.AgentRules) throws {
        let policy = try Policy(
            jsonData: Array(#"{"version": 1, "name": "a", "agent": \#(section)}"#.utf8), source: "a.json")
        #expect(policy.agent == expected)
        var others = policy
        others.agent = .standard
        var expectedOthers = Policy.default
        expectedOthers.name = "a"
        #expect(others == expectedOthers, "the agent section changes nothing else")
    }

    static let malformed: [(json: String, keyPath: String)] = [
        (#"{"name": "x"}"#, "version"),
        (#"{"version": 1}"#, "name"),
        (#"{"version": 2, "name": "x"}"#, "version"),
        (#"{"version": "1", "name": "x"}"#, "version"),
        (#"{"version": 1, "name": ""}"#, "name"),
        (#"{"version": 1, "name": "x", "colour": "red"}"#, "colour"),
        (#"{"version": 1, "name": "x", "username": {"remember": "yes"}}"#, "username.remember"),
        (#"{"version": 1, "name": "x", "username": {"remember": true, "prefill": true}}"#, "username.prefill"),
        (#"{"version": 1, "name": "x", "sessions": {"maxAgeSeconds": 0}}"#, "sessions.maxAgeSeconds"),
        (#"{"version": 1, "name": "x", "sessions": {"maxAgeSeconds": -5}}"#, "sessions.maxAgeSeconds"),
        (#"{"version": 1, "name": "x", "sessions": {"maxAgeSeconds": 1.5}}"#, "sessions.maxAgeSeconds"),
        (#"{"version": 1, "name": "x", "sessions": {"wipeOnExit": 1}}"#, "sessions.wipeOnExit"),
        (#"{"version": 1, "name": "x", "sessions": null}"#, "sessions"),
        (#"{"version": 1, "name": "x", "onLogout": {"sessions": "shred"}}"#, "onLogout.sessions"),
        (
            #"{"version": 1, "name": "x", "username": {"remember": false}, "onLogout": {"username": "keep"}}"#,
            "onLogout.username"
        ),
        (#"{"version": 1, "name": "x", "secrets": {"onLogout": "forget"}}"#, "secrets.onLogout"),
        (#"{"version": 1, "name": "x", "secrets": {"maxAgeSeconds": 0}}"#, "secrets.maxAgeSeconds"),
        (#"{"version": 1, "name": "x", "secrets": {"wipeOnExit": true}}"#, "secrets.wipeOnExit"),
        (#"{"version": 1, "name": "x", "backend": {"kind": "keychain"}}"#, "backend.kind"),
        (
            #"{"version": 1, "name": "x", "backend": {"kind": "secret-service", "allowFileFallback": true}}"#,
            "backend.allowFileFallback"
        ),
        (
            #"{"version": 1, "name": "x", "backend": {"kind": "file", "allowFileFallback": false}}"#,
            "backend.allowFileFallback"
        ),
        (
            #"{"version": 1, "name": "x", "backend": {"kind": "file", "migrateToSecretService": true}}"#,
            "backend.migrateToSecretService"
        ),
        (
            #"{"version": 1, "name": "x", "backend": {"secretServiceTimeoutMilliseconds": 0}}"#,
            "backend.secretServiceTimeoutMilliseconds"
        ),
        (
            #"{"version": 1, "name": "x", "backend": {"kind": "secret-service"}, "file": {"keySource": "keyfile"}}"#,
            "file.keySource"
        ),
        (#"{"version": 1, "name": "x", "backend": {"allowFileFallback": false}, "file": {"kdf": {}}}"#, "file.kdf"),
        (#"{"version": 1, "name": "x", "file": {"keySource": "usb-stick"}}"#, "file.keySource"),
        (
            #"{"version": 1, "name": "x", "file": {"keySource": "keyfile", "kdf": {"targetUnlockMilliseconds": 500}}}"#,
            "file.kdf"
        ),
        (
            #"{"version": 1, "name": "x", "file": {"keySource": "passphrase", "kdf": {"minimumMemoryKiB": 2000000, "maximumMemoryKiB": 1000}}}"#,
            "file.kdf.minimumMemoryKiB"
        ),
        (
            #"{"version": 1, "name": "x", "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 1}}}"#,
            "file.kdf.targetUnlockMilliseconds"
        ),
        (#"{"version": 1, "name": "x", "audit": {"maxEntries": 5}}"#, "audit.maxEntries"),
        (#"{"version": 1, "name": "x", "audit": {"maxAgeDays": "forever"}}"#, "audit.maxAgeDays"),
        (#"{"version": 1, "name": "x", "audit": {"onFailure": "ignore"}}"#, "audit.onFailure"),
        (#"{"version": 1, "name": "x", "audit": [true]}"#, "audit"),
        (#"{"version": 1, "name": "x", "agent": null}"#, "agent"),
        (#"{"version": 1, "name": "x", "agent": {"lockOnSuspend": true}}"#, "agent.lockOnSuspend"),
        (#"{"version": 1, "name": "x", "agent": {"autostart": "yes"}}"#, "agent.autostart"),
        (#"{"version": 1, "name": "x", "agent": {"serveSecretService": "yes"}}"#, "agent.serveSecretService"),
        (#"{"version": 1, "name": "x", "agent": {"unlockCacheSeconds": -1}}"#, "agent.unlockCacheSeconds"),
        (#"{"version": 1, "name": "x", "agent": {"unlockCacheSeconds": 86401}}"#, "agent.unlockCacheSeconds"),
        (#"{"version": 1, "name": "x", "agent": {"unlockCacheSeconds": "900"}}"#, "agent.unlockCacheSeconds"),
        (#"{"version": 1, "name": "x", "agent": {"unlockCacheSeconds": 1.5}}"#, "agent.unlockCacheSeconds"),
        (#"{"version": 1, "name": "x", "agent": {"idleExitSeconds": 0}}"#, "agent.idleExitSeconds"),
        (#"{"version": 1, "name": "x", "agent": {"idleExitSeconds": 86401}}"#, "agent.idleExitSeconds"),
        (#"{"version": 1, "name": "x", "agent": {"idleExitSeconds": null}}"#, "agent.idleExitSeconds"),
    ]

    @Test("a malformed policy is an invalidInput error naming the file and the offending key", arguments: malformed)
    func malformedPolicy(json: String, keyPath: String) {
        let error = #expect(throws: LatchkeyError.self) {
            try Policy(jsonData: Array(json.utf8), source: "policy/broken.json")
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.hasPrefix("policy/broken.json: \(keyPath): ") == true, "\(error?.message ?? "no error")")
    }

    @Test("a document that is not JSON names the file")
    func notJSON() {
        let error = #expect(throws: LatchkeyError.self) {
            try Policy(jsonData: Array("{\"version\": 1,".utf8), source: "policy/cut.json")
        }
        #expect(error?.code == .invalidInput && error?.message.hasPrefix("policy/cut.json: ") == true)
    }

    @Test("a missing policy file is notFound naming the path")
    func missingFile() {
        let error = #expect(throws: LatchkeyError.self) { try Policy(contentsOfFile: "/nonexistent/policy.json") }
        #expect(error?.code == .notFound && error?.message.contains("/nonexistent/policy.json") == true)
    }

    @Test(
        "remembering a username: a forbidding policy wins over the user, the user's opt-out wins over an allowing policy",
        arguments: [(true, false, true), (true, true, false), (false, false, false), (false, true, false)])
    func rememberDecision(policyAllows: Bool, userOptedOut: Bool, allowed: Bool) {
        var policy = Policy.default
        policy.remembersUsernames = policyAllows
        let decision = policy.rememberUsernameDecision(userOptedOut: userOptedOut)
        #expect(decision.isAllowed == allowed)
        if !policyAllows { #expect(decision.reason?.contains("username.remember") == true) }
        if policyAllows && userOptedOut { #expect(decision.reason?.contains("user") == true) }
    }

    @Test("decisions compose: all(of:) takes the first denial, any(of:) needs one allow, and() short-circuits")
    func composition() {
        let no1 = PolicyDecision.deny(reason: "one")
        let no2 = PolicyDecision.deny(reason: "two")
        #expect(PolicyDecision.all(of: []) == .allow)
        #expect(PolicyDecision.all(of: [.allow, .allow]) == .allow)
        #expect(PolicyDecision.all(of: [.allow, no1, no2]) == no1)
        #expect(PolicyDecision.any(of: [no1, .allow]) == .allow)
        #expect(PolicyDecision.any(of: [no1, no2]) == .deny(reason: "one; two"))
        #expect(!PolicyDecision.any(of: []).isAllowed)
        var evaluated = false
        #expect(
            no1.and(
                {
                    evaluated = true
                    return .allow
                }()) == no1)
        #expect(!evaluated)
        #expect(PolicyDecision.allow.and(no2) == no2)
        let error = #expect(throws: LatchkeyError.self) { try no2.requireAllowed() }
        #expect(error?.code == .policyDenied && error?.message == "two")
        #expect(throws: Never.self) { try PolicyDecision.allow.requireAllowed() }
    }

    @Test("fallback and migration decisions follow the backend rules")
    func backendDecisions() {
        #expect(Policy.default.fileFallbackDecision(reason: "no session bus") == .allow)
        let strictDenial = Policy.strict.fileFallbackDecision(reason: "no session bus")
        #expect(strictDenial.reason?.contains("no session bus") == true)
        var noFallback = Policy.default
        noFallback.allowsFileFallback = false
        #expect(noFallback.fileFallbackDecision(reason: "x").reason?.contains("backend.allowFileFallback") == true)
        #expect(Policy.default.automaticMigrationDecision() == .allow)
    }

    @Test("a session's expiry is capped at the policy's maximum age")
    func sessionExpiryCap() {
        let created = Date(timeIntervalSince1970: 1_000_000)
        let strict = Policy.strict
        #expect(
            strict.sessionExpiry(requested: nil, created: created) == created.addingTimeInterval(strict.sessionMaxAge))
        #expect(
            strict.sessionExpiry(requested: created.addingTimeInterval(60), created: created)
                == created.addingTimeInterval(60))
        #expect(
            strict.sessionExpiry(requested: created.addingTimeInterval(10 * 86_400), created: created)
                == created.addingTimeInterval(strict.sessionMaxAge))
    }

    @Test("the validating initializer builds what the parser builds")
    func validatingInitializerMatchesParser() throws {
        let built = try Policy(name: "default", sessionMaxAge: 2_592_000, secretServiceTimeout: 3)
        let parsed = try Policy(jsonData: Array(#"{"version": 1, "name": "default"}"#.utf8), source: "test")
        #expect(built == parsed)
        #expect(built.source == "code:default")
        let passphrase = try Policy(
            name: "kiosk", remembersUsernames: false, backend: .file, fileKeySource: .passphrase,
            kdf: Policy.KDFBounds(
                targetUnlockTime: 0.2, minimumMemoryKiB: 8_192, maximumMemoryKiB: 65_536, maximumOpsLimit: 4))
        #expect(passphrase.usernameOnLogout == .forget)
        #expect(passphrase.kdf?.maximumOpsLimit == 4)
        #expect(!passphrase.migratesToSecretService)
    }

    @Test(
        "the validating initializer refuses what the parser refuses, naming the field",
        arguments: [
            ({ @Sendable in try Policy(name: "") }, "name"),
            (
                { @Sendable in try Policy(name: "x", remembersUsernames: false, usernameOnLogout: .keep) },
                "onLogout.username"
            ),
            ({ @Sendable in try Policy(name: "x", sessionMaxAge: 0) }, "sessions.maxAgeSeconds"),
            ({ @Sendable in try Policy(name: "x", sessionMaxAge: 1.5) }, "sessions.maxAgeSeconds"),
            (
                { @Sendable in try Policy(name: "x", backend: .secretService, allowsFileFallback: true) },
                "backend.allowFileFallback"
            ),
            (
                { @Sendable in try Policy(name: "x", secretServiceTimeout: 100) },
                "backend.secretServiceTimeoutMilliseconds"
            ),
            ({ @Sendable in try Policy(name: "x", fileKeySource: .keyfile, kdf: .standard) }, "file.kdf"),
            (
                { @Sendable in try Policy(name: "x", backend: .secretService, fileKeySource: .keyfile) },
                "file.keySource"
            ),
            (
                { @Sendable in
                    try Policy(
                        name: "x", fileKeySource: .passphrase,
                        kdf: Policy.KDFBounds(
                            targetUnlockTime: 0.5, minimumMemoryKiB: 64, maximumMemoryKiB: 32, maximumOpsLimit: 4))
                }, "file.kdf"
            ),
        ] as [(@Sendable () throws -> Policy, String)])
    func validatingInitializerRefuses(make: @Sendable () throws -> Policy, field: String) {
        let error = #expect(throws: LatchkeyError.self) { try make() }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains(field) == true, "\(error?.message ?? "no error") should name \(field)")
    }
}
