#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An app's credential policy: what may be remembered, for how long, what a
/// logout wipes, which store may hold the data, how the audit trail is kept,
/// and how the per-user agent runs.
///
/// Policies are data (`policy/*.json`, documented field by field in
/// `policy/README.md`), parsed strictly by ``init(jsonData:source:)``. The
/// shipped ones are built in as ``default``, ``strict`` and ``sharedDevice``.
/// Questions a `Vault` asks are answered as ``PolicyDecision`` values by the
/// methods in `Policy+Decisions.swift`.
public struct Policy: Sendable {
    /// The policy format version this Latchkey reads.
    public static let formatVersion = 1

    /// The policy format version of the document (`version`).
    public internal(set) var version: Int
    /// The policy's short name, shown by `latchkey status` (`name`).
    public internal(set) var name: String
    /// Where the policy came from: a file path, or `built-in:<name>`. Not part of equality.
    public internal(set) var source: String

    /// Whether usernames may be remembered at all (`username.remember`). The
    /// user's own opt-out still wins when this is true.
    public internal(set) var remembersUsernames: Bool
    /// The longest life of any session, in seconds (`sessions.maxAgeSeconds`).
    public internal(set) var sessionMaxAge: TimeInterval
    /// Whether every session is wiped when the app exits (`sessions.wipeOnExit`).
    public internal(set) var wipesSessionsOnExit: Bool

    /// What a logout does with the account's sessions (`onLogout.sessions`).
    public internal(set) var sessionsOnLogout: SessionsOnLogout
    /// What a logout does with the remembered username (`onLogout.username`).
    public internal(set) var usernameOnLogout: UsernameOnLogout

    /// The longest life of a named secret, in seconds (`secrets.maxAgeSeconds`);
    /// nil, the default, for no limit. Not capped by ``sessionMaxAge``.
    public internal(set) var secretMaxAge: TimeInterval?
    /// What a logout does with the named secrets (`secrets.onLogout`); `keep` by default.
    public internal(set) var secretsOnLogout: SecretsOnLogout

    /// Which store holds the credentials (`backend.kind`).
    public internal(set) var backend: BackendChoice
    /// Whether `auto` may fall back to the encrypted file (`backend.allowFileFallback`).
    public internal(set) var allowsFileFallback: Bool
    /// Whether a file vault is moved into the Secret Service automatically once
    /// it answers again (`backend.migrateToSecretService`).
    public internal(set) var migratesToSecretService: Bool
    /// The deadline of every Secret Service call, in seconds
    /// (`backend.secretServiceTimeoutMilliseconds` / 1000).
    public internal(set) var secretServiceTimeout: TimeInterval
    /// Whether a locked collection is unlocked through the provider's prompt
    /// (`secretService.unlock`); nil when the policy leaves it to the session:
    /// see ``SecretServiceUnlock/sessionDefault(environment:)``.
    public internal(set) var secretServiceUnlock: SecretServiceUnlock? = nil
    /// How long an unlock prompt may wait for a person, in seconds
    /// (`secretService.unlockTimeoutSeconds`; 60 by default).
    public internal(set) var secretServiceUnlockTimeout: TimeInterval = 60

    /// How the encrypted file's key is obtained (`file.keySource`); nil when the
    /// policy never uses the file.
    public internal(set) var fileKeySource: FileKeySource?
    /// The passphrase KDF's calibration target and the bounds a reader accepts
    /// (`file.kdf`); nil unless ``fileKeySource`` is `.passphrase`.
    public internal(set) var kdf: KDFBounds?

    /// How the audit trail is kept (`audit`).
    public internal(set) var audit: AuditRules

    /// How the per-user agent is run and how long it keeps an unlocked vault
    /// (`agent`); the command line's, read from the policy file.
    package internal(set) var agent: AgentRules

    /// Whether this policy can ever use the encrypted file.
    public var usesFile: Bool {
        backend == .file || (backend == .auto && allowsFileFallback)
    }
}
