#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Policy {
    /// Builds a policy in code, validated exactly as a policy file is: the
    /// rules are written as the policy document they stand for and read by
    /// ``init(jsonData:source:)``, so whatever the parser refuses (a value out of
    /// range, a contradiction such as keeping a username that is never
    /// remembered) this refuses too, naming the same key.
    ///
    /// Each parameter is the field of `policy/README.md` named in its
    /// description; an omitted one takes the same default as an absent key.
    /// - Parameters:
    ///   - name: `name`: 1 to 64 characters from `A-Z a-z 0-9 - _ .`.
    ///   - remembersUsernames: `username.remember`.
    ///   - sessionMaxAge: `sessions.maxAgeSeconds`, in whole seconds.
    ///   - wipesSessionsOnExit: `sessions.wipeOnExit`.
    ///   - sessionsOnLogout: `onLogout.sessions`.
    ///   - usernameOnLogout: `onLogout.username`; nil for its default (keep
    ///     when usernames are remembered, else forget).
    ///   - secretMaxAge: `secrets.maxAgeSeconds`, in whole seconds; nil for no limit (the default).
    ///   - secretsOnLogout: `secrets.onLogout`.
    ///   - backend: `backend.kind`.
    ///   - allowsFileFallback: `backend.allowFileFallback`; nil for its default.
    ///   - migratesToSecretService: `backend.migrateToSecretService`; nil for its default.
    ///   - secretServiceTimeout: `backend.secretServiceTimeoutMilliseconds` / 1000, in whole milliseconds.
    ///   - fileKeySource: `file.keySource`; nil for its default.
    ///   - kdf: `file.kdf`, only with the `passphrase` key source; nil for its default.
    ///   - audit: `audit.enabled`, `audit.maxEntries`, `audit.maxAgeDays` (whole days), `audit.onFailure`.
    /// - Throws: `LatchkeyError` `.invalidInput` naming the offending field, as
    ///   for a policy file.
    public init(
        name: String,
        remembersUsernames: Bool = true,
        sessionMaxAge: TimeInterval = 2_592_000,
        wipesSessionsOnExit: Bool = false,
        sessionsOnLogout: SessionsOnLogout = .wipe,
        usernameOnLogout: UsernameOnLogout? = nil,
        secretMaxAge: TimeInterval? = nil,
        secretsOnLogout: SecretsOnLogout = .keep,
        backend: BackendChoice = .auto,
        allowsFileFallback: Bool? = nil,
        migratesToSecretService: Bool? = nil,
        secretServiceTimeout: TimeInterval = 3,
        fileKeySource: FileKeySource? = nil,
        kdf: KDFBounds? = nil,
        audit: AuditRules = AuditRules(
            isEnabled: true, retention: AuditRetention(maxEntries: 10_000, maxAge: 365 * 86_400), failureMode: .fail)
    ) throws {
        var document = PolicyDocument()
        document.add("version", "\(Policy.formatVersion)")
        document.add("name", JSONText.quoted(name))
        document.section("username") { $0.add("remember", "\(remembersUsernames)") }
        document.section("sessions") {
            $0.add("maxAgeSeconds", PolicyDocument.number(sessionMaxAge))
            $0.add("wipeOnExit", "\(wipesSessionsOnExit)")
        }
        document.section("onLogout") {
            $0.add("sessions", JSONText.quoted(sessionsOnLogout.rawValue))
            if let usernameOnLogout { $0.add("username", JSONText.quoted(usernameOnLogout.rawValue)) }
        }
        document.section("secrets") {
            $0.add("maxAgeSeconds", secretMaxAge.map(PolicyDocument.number) ?? "null")
            $0.add("onLogout", JSONText.quoted(secretsOnLogout.rawValue))
        }
        document.section("backend") {
            $0.add("kind", JSONText.quoted(backend.rawValue))
            if let allowsFileFallback { $0.add("allowFileFallback", "\(allowsFileFallback)") }
            if let migratesToSecretService { $0.add("migrateToSecretService", "\(migratesToSecretService)") }
            $0.add("secretServiceTimeoutMilliseconds", PolicyDocument.number(secretServiceTimeout * 1_000))
        }
        if fileKeySource != nil || kdf != nil {
            document.section("file") { file in
                if let fileKeySource { file.add("keySource", JSONText.quoted(fileKeySource.rawValue)) }
                if let kdf {
                    file.section("kdf") {
                        $0.add("targetUnlockMilliseconds", PolicyDocument.number(kdf.targetUnlockTime * 1_000))
                        $0.add("minimumMemoryKiB", "\(kdf.minimumMemoryKiB)")
                        $0.add("maximumMemoryKiB", "\(kdf.maximumMemoryKiB)")
                        $0.add("maximumOpsLimit", "\(kdf.maximumOpsLimit)")
                    }
                }
            }
        }
        document.section("audit") {
            $0.add("enabled", "\(audit.isEnabled)")
            $0.add("maxEntries", audit.retention.maxEntries.map { "\($0)" } ?? "null")
            $0.add("maxAgeDays", audit.retention.maxAge.map { PolicyDocument.number($0 / 86_400) } ?? "null")
            $0.add("onFailure", JSONText.quoted(audit.failureMode.rawValue))
        }
        try self.init(jsonData: Array(document.text.utf8), source: "code:\(name)")
    }
}

/// A policy document written field by field, for ``Policy/init(name:remembersUsernames:sessionMaxAge:wipesSessionsOnExit:sessionsOnLogout:usernameOnLogout:secretMaxAge:secretsOnLogout:backend:allowsFileFallback:migratesToSecretService:secretServiceTimeout:fileKeySource:kdf:audit:)``.
private struct PolicyDocument {
    private var members: [String] = []

    var text: String { "{" + members.joined(separator: ",") + "}" }

    mutating func add(_ key: String, _ json: String) {
        members.append(JSONText.quoted(key) + ":" + json)
    }

    mutating func section(_ key: String, _ fill: (inout PolicyDocument) -> Void) {
        var inner = PolicyDocument()
        fill(&inner)
        add(key, inner.text)
    }

    /// A whole number as an integer literal; anything else as a fraction, which
    /// the parser then refuses where it wants a whole number.
    static func number(_ value: Double) -> String {
        if let whole = Int64(exactly: value) { return "\(whole)" }
        return value.isFinite ? "\(value)" : "null"
    }
}
