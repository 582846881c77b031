#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Policy {
    /// Parses and validates a policy document.
    ///
    /// Parsing is strict: an unknown key, a wrong type, a value out of range, a
    /// missing required key (`version`, `name`) or an impossible combination is
    /// an error. Absent optional keys take the defaults listed in `policy/README.md`.
    /// - Parameters:
    ///   - jsonData: The document's bytes (UTF-8 JSON).
    ///   - source: Where it came from (a path, say), named in errors and kept in ``source``.
    /// - Throws: `LatchkeyError` `.invalidInput` whose message names `source` and
    ///   the offending key path (such as `sessions.maxAgeSeconds`).
    public init(jsonData: some Collection<UInt8>, source: String) throws {
        let root = try JSONObjectReader(
            JSONValue.parse(jsonData, source: source), path: "", source: source,
            allowedKeys: [
                "version", "name", "username", "sessions", "onLogout", "secrets", "backend", "secretService", "file",
                "audit", "agent",
            ])
        guard case .integer(let version) = try root.required("version") else {
            throw root.error("version", "must be the integer \(Policy.formatVersion)")
        }
        guard version == Policy.formatVersion else {
            throw root.error("version", "this Latchkey reads policy version \(Policy.formatVersion), not \(version)")
        }
        guard case .string(let name) = try root.required("name") else { throw root.error("name", "must be a string") }
        guard (1...64).contains(name.utf8.count),
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
        else {
            throw root.error("name", "must be 1 to 64 characters from A-Z, a-z, 0-9, '-', '_', '.'")
        }
        self.init(
            version: Int(version), name: name, source: source,
            remembersUsernames: true, sessionMaxAge: 2_592_000, wipesSessionsOnExit: false,
            sessionsOnLogout: .wipe, usernameOnLogout: .keep, secretMaxAge: nil, secretsOnLogout: .keep,
            backend: .auto, allowsFileFallback: true, migratesToSecretService: true, secretServiceTimeout: 3,
            fileKeySource: .keyfile, kdf: nil,
            audit: AuditRules(isEnabled: true, retention: .unbounded, failureMode: .fail), agent: .standard)
        try readUserRules(root)
        try readBackend(root)
        try readSecretService(root)
        try readFile(root)
        try readAudit(root)
        try readAgent(root)
    }

    /// The longest policy file read (64 KiB; the shipped ones are under 1 KiB),
    /// so that a wrong path cannot make Latchkey read without end.
    static let maximumFileLength = 64 * 1024

    /// Reads and validates a policy file.
    ///
    /// A policy decides what is kept and whether it is audited, so it is trusted
    /// only when nobody else could have changed it: the file must be a regular
    /// file, at most 64 KiB, owned by this user (or root), not
    /// writable by its group or others, in a directory with the same properties
    /// (see `policy/README.md`). It need not be private: a policy holds no secret.
    /// - Parameter path: The file's path.
    /// - Throws: `LatchkeyError` `.notFound` when it does not exist;
    ///   `.insecurePermissions` naming the path when it or its directory could be
    ///   changed by someone else, or is a symbolic link; `.invalidInput` when it is
    ///   not a regular file, too long, or as ``init(jsonData:source:)``; `.io`.
    public init(contentsOfFile path: String) throws {
        let bytes = try PrivateFiles.readProtected(atPath: path, limit: Policy.maximumFileLength)
        try self.init(jsonData: bytes, source: path)
    }

    private mutating func readUserRules(_ root: JSONObjectReader) throws {
        let username = try root.object("username", allowedKeys: ["remember"])
        remembersUsernames = try username?.bool("remember") ?? true

        let sessions = try root.object("sessions", allowedKeys: ["maxAgeSeconds", "wipeOnExit"])
        sessionMaxAge = TimeInterval(try sessions?.integer("maxAgeSeconds", in: 1...315_360_000) ?? 2_592_000)
        wipesSessionsOnExit = try sessions?.bool("wipeOnExit") ?? false

        let logout = try root.object("onLogout", allowedKeys: ["sessions", "username"])
        sessionsOnLogout = try logout?.choice("sessions", SessionsOnLogout.self) ?? .wipe
        let usernameOnLogout = try logout?.choice("username", UsernameOnLogout.self)
        if let logout, usernameOnLogout == .keep, !remembersUsernames {
            throw logout.error("username", "\"keep\" contradicts username.remember false: no username is ever kept")
        }
        self.usernameOnLogout = usernameOnLogout ?? (remembersUsernames ? .keep : .forget)

        let secrets = try root.object("secrets", allowedKeys: ["maxAgeSeconds", "onLogout"])
        let secretMaxAge = try secrets?.integerOrNull("maxAgeSeconds", in: 1...315_360_000) ?? nil
        self.secretMaxAge = secretMaxAge.map(TimeInterval.init)
        secretsOnLogout = try secrets?.choice("onLogout", SecretsOnLogout.self) ?? .keep
    }

    private mutating func readBackend(_ root: JSONObjectReader) throws {
        let section = try root.object(
            "backend",
            allowedKeys: [
                "kind", "allowFileFallback", "migrateToSecretService", "secretServiceTimeoutMilliseconds",
            ])
        backend = try section?.choice("kind", BackendChoice.self) ?? .auto
        let fallback = try section?.bool("allowFileFallback")
        if let section, backend == .secretService, fallback == true {
            throw section.error(
                "allowFileFallback", "must be false when backend.kind is \"secret-service\" (it fails closed)")
        }
        if let section, backend == .file, fallback == false {
            throw section.error(
                "allowFileFallback", "cannot be false when backend.kind is \"file\" (the file is the only store)")
        }
        allowsFileFallback = fallback ?? (backend != .secretService)
        let migrate = try section?.bool("migrateToSecretService")
        if let section, backend == .file, migrate == true {
            throw section.error("migrateToSecretService", "cannot be true when backend.kind is \"file\"")
        }
        migratesToSecretService = migrate ?? (backend != .file)
        let timeout = try section?.integer("secretServiceTimeoutMilliseconds", in: 100...60_000) ?? 3_000
        secretServiceTimeout = TimeInterval(timeout) / 1_000
    }

    private mutating func readSecretService(_ root: JSONObjectReader) throws {
        let section = try root.object("secretService", allowedKeys: ["unlock", "unlockTimeoutSeconds"])
        secretServiceUnlock = try section?.choice("unlock", SecretServiceUnlock.self)
        secretServiceUnlockTimeout = TimeInterval(try section?.integer("unlockTimeoutSeconds", in: 1...100) ?? 60)
    }

    private mutating func readFile(_ root: JSONObjectReader) throws {
        let section = try root.object("file", allowedKeys: ["keySource", "kdf"])
        guard let section else {
            fileKeySource = usesFile ? .keyfile : nil
            kdf = nil
            return
        }
        guard usesFile else {
            let key = section.contains("keySource") ? "keySource" : "kdf"
            throw section.error(
                key,
                "is set, but this policy never uses the file (backend.kind \"\(backend.rawValue)\", allowFileFallback false)"
            )
        }
        let keySource = try section.choice("keySource", FileKeySource.self) ?? .keyfile
        fileKeySource = keySource
        guard
            let kdfSection = try section.object(
                "kdf",
                allowedKeys: [
                    "targetUnlockMilliseconds", "minimumMemoryKiB", "maximumMemoryKiB", "maximumOpsLimit",
                ])
        else {
            kdf = keySource == .passphrase ? .standard : nil
            return
        }
        guard keySource == .passphrase else {
            throw section.error("kdf", "applies only to file.keySource \"passphrase\", not \"\(keySource.rawValue)\"")
        }
        let standard = KDFBounds.standard
        let target = try kdfSection.integer("targetUnlockMilliseconds", in: 50...10_000)
        let minimum = try kdfSection.integer("minimumMemoryKiB", in: 8...4_194_304)
        let maximum = try kdfSection.integer("maximumMemoryKiB", in: 8...4_194_304)
        let ops = try kdfSection.integer("maximumOpsLimit", in: 1...1_000)
        let bounds = KDFBounds(
            targetUnlockTime: target.map { Double($0) / 1_000 } ?? standard.targetUnlockTime,
            minimumMemoryKiB: minimum.map(Int.init) ?? standard.minimumMemoryKiB,
            maximumMemoryKiB: maximum.map(Int.init) ?? standard.maximumMemoryKiB,
            maximumOpsLimit: ops.map(Int.init) ?? standard.maximumOpsLimit)
        guard bounds.minimumMemoryKiB <= bounds.maximumMemoryKiB else {
            let key = minimum != nil ? "minimumMemoryKiB" : "maximumMemoryKiB"
            throw kdfSection.error(
                key,
                "minimumMemoryKiB (\(bounds.minimumMemoryKiB)) exceeds maximumMemoryKiB (\(bounds.maximumMemoryKiB))")
        }
        kdf = bounds
    }

    private mutating func readAudit(_ root: JSONObjectReader) throws {
        let section = try root.object("audit", allowedKeys: ["enabled", "maxEntries", "maxAgeDays", "onFailure"])
        let maxEntries = try section?.integerOrNull("maxEntries", in: 10...100_000_000) ?? 10_000
        let maxAgeDays = try section?.integerOrNull("maxAgeDays", in: 1...36_500) ?? 365
        audit = AuditRules(
            isEnabled: try section?.bool("enabled") ?? true,
            retention: AuditRetention(
                maxEntries: maxEntries.map(Int.init), maxAge: maxAgeDays.map { TimeInterval($0) * 86_400 }),
            failureMode: try section?.choice("onFailure", AuditFailureMode.self) ?? .fail)
    }

    private mutating func readAgent(_ root: JSONObjectReader) throws {
        let section = try root.object(
            "agent",
            allowedKeys: [
                "autostart", "unlockCacheSeconds", "idleExitSeconds", "secretServiceClientCollections",
                "serveSecretService",
            ])
        let standard = AgentRules.standard
        let autostart = try section?.bool("autostart")
        let unlockCache = try section?.integer("unlockCacheSeconds", in: 0...86_400)
        let idleExit = try section?.integer("idleExitSeconds", in: 1...86_400)
        let collections = try section?.bool("secretServiceClientCollections")
        let serves = try section?.bool("serveSecretService")
        agent = AgentRules(
            autostarts: autostart ?? standard.autostarts,
            unlockCacheDuration: unlockCache.map(TimeInterval.init) ?? standard.unlockCacheDuration,
            idleTimeout: idleExit.map(TimeInterval.init) ?? standard.idleTimeout,
            allowsClientCollections: collections ?? standard.allowsClientCollections,
            servesSecretService: serves ?? standard.servesSecretService)
    }
}
