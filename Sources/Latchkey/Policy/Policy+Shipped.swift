// The shipped policies, embedded so the library and the command line work
// without the files. `PolicyTests` checks that each text equals its file in
// `policy/` byte for byte, so they cannot drift apart.

extension Policy {
    /// The text of `policy/default.json`.
    static let defaultJSON = #"""
        {
          "version": 1,
          "name": "default",
          "username": {
            "remember": true
          },
          "sessions": {
            "maxAgeSeconds": 2592000,
            "wipeOnExit": false
          },
          "onLogout": {
            "sessions": "wipe",
            "username": "keep"
          },
          "secrets": {
            "maxAgeSeconds": null,
            "onLogout": "keep"
          },
          "backend": {
            "kind": "auto",
            "allowFileFallback": true,
            "migrateToSecretService": true,
            "secretServiceTimeoutMilliseconds": 3000
          },
          "file": {
            "keySource": "keyfile"
          },
          "audit": {
            "enabled": true,
            "maxEntries": 10000,
            "maxAgeDays": 365,
            "onFailure": "fail"
          },
          "agent": {
            "autostart": true,
            "unlockCacheSeconds": 900,
            "idleExitSeconds": 600
          }
        }

        """#

    /// The text of `policy/strict.json`.
    static let strictJSON = #"""
        {
          "version": 1,
          "name": "strict",
          "username": {
            "remember": true
          },
          "sessions": {
            "maxAgeSeconds": 28800,
            "wipeOnExit": false
          },
          "onLogout": {
            "sessions": "wipe",
            "username": "forget"
          },
          "secrets": {
            "maxAgeSeconds": null,
            "onLogout": "wipe"
          },
          "backend": {
            "kind": "secret-service",
            "allowFileFallback": false,
            "migrateToSecretService": true,
            "secretServiceTimeoutMilliseconds": 3000
          },
          "audit": {
            "enabled": true,
            "maxEntries": 100000,
            "maxAgeDays": null,
            "onFailure": "fail"
          },
          "agent": {
            "autostart": true,
            "unlockCacheSeconds": 0,
            "idleExitSeconds": 300
          }
        }

        """#

    /// The text of `policy/shared-device.json`.
    static let sharedDeviceJSON = #"""
        {
          "version": 1,
          "name": "shared-device",
          "username": {
            "remember": false
          },
          "sessions": {
            "maxAgeSeconds": 43200,
            "wipeOnExit": true
          },
          "onLogout": {
            "sessions": "wipe",
            "username": "forget"
          },
          "secrets": {
            "maxAgeSeconds": null,
            "onLogout": "wipe"
          },
          "backend": {
            "kind": "auto",
            "allowFileFallback": true,
            "migrateToSecretService": true,
            "secretServiceTimeoutMilliseconds": 3000
          },
          "file": {
            "keySource": "keyfile"
          },
          "audit": {
            "enabled": true,
            "maxEntries": 10000,
            "maxAgeDays": 90,
            "onFailure": "fail"
          },
          "agent": {
            "autostart": true,
            "unlockCacheSeconds": 60,
            "idleExitSeconds": 120
          }
        }

        """#

    /// The shipped default policy (`policy/default.json`): remember usernames,
    /// sessions up to 30 days, a logout wipes the account's sessions and keeps
    /// the username and the app's named secrets (which do not expire), the
    /// encrypted-file fallback is allowed, the agent keeps an unlocked vault 15 minutes.
    ///
    /// Built as a value, not parsed from `defaultJSON`: most processes use
    /// it, and parsing JSON on every start is work a command need not do.
    /// `PolicyTests` checks that it equals what `policy/default.json` parses to.
    public static let `default` = Policy(
        version: formatVersion, name: "default", source: "built-in:default",
        remembersUsernames: true, sessionMaxAge: 2_592_000, wipesSessionsOnExit: false,
        sessionsOnLogout: .wipe, usernameOnLogout: .keep, secretMaxAge: nil, secretsOnLogout: .keep,
        backend: .auto, allowsFileFallback: true, migratesToSecretService: true, secretServiceTimeout: 3,
        fileKeySource: .keyfile, kdf: nil,
        audit: AuditRules(
            isEnabled: true, retention: AuditRetention(maxEntries: 10_000, maxAge: 365 * 86_400), failureMode: .fail),
        agent: .standard)

    /// The shipped strict policy (`policy/strict.json`): the Secret Service or
    /// nothing (no file fallback), a logout wipes sessions, username and named secrets, sessions
    /// live at most 8 hours, the agent keeps no unlocked vault.
    public static let strict = builtIn(strictJSON, name: "strict")

    /// The shipped policy for kiosks and shared tablets (`policy/shared-device.json`):
    /// usernames are never remembered, no session survives a logout or the app's
    /// exit, a logout wipes the named secrets, and the agent keeps an unlocked vault 1 minute.
    public static let sharedDevice = builtIn(sharedDeviceJSON, name: "shared-device")

    /// The built-in policy called `name` (`default`, `strict`, `shared-device`), or nil.
    /// - Parameter name: The policy's name.
    /// - Returns: The policy, or nil when there is no built-in policy of that name.
    public static func builtIn(named name: String) -> Policy? {
        // Only the one asked for is touched: the others are parsed on first use.
        switch name {
        case "default": .default
        case "strict": .strict
        case "shared-device": .sharedDevice
        default: nil
        }
    }

    private static func builtIn(_ text: String, name: String) -> Policy {
        do {
            return try Policy(jsonData: Array(text.utf8), source: "built-in:\(name)")
        } catch {
            preconditionFailure("the embedded policy '\(name)' does not parse: \(error)")
        }
    }
}
