#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

/// The git credentials stored for one protocol and host, so that `get` reads
/// the few candidates of that host by name instead of listing every session.
///
/// It is kept as the session `git-index:<protocol>://<host>` of the empty
/// account, a small JSON document (encrypted like any session value) listing,
/// most recently stored first, each credential's username and path, the
/// `password_expiry_utc` git gave (which the session's own expiry cannot hold,
/// since the policy caps that), and whether it has an OAuth refresh token.
///
/// The session `git-index` of the empty account marks a namespace whose git
/// credentials are all indexed; without it (credentials stored by Latchkey
/// 0.1, or a logout that took the indexes with it) the helper rebuilds every
/// index from the stored `git:` sessions once, then writes the mark.
struct GitCredentialIndex: Codable, Equatable, Sendable {
    /// One stored credential of the host.
    struct Entry: Codable, Equatable, Sendable {
        /// The username (the session's account); may be empty.
        var username: String
        /// The path, for a credential stored with `credential.useHttpPath`.
        var path: String?
        /// git's `password_expiry_utc`, in seconds since 1970, when git gave one.
        var expiry: Int64?
        /// Whether a `git-refresh:` session holds an OAuth refresh token.
        var hasRefreshToken: Bool

        /// Whether a request asking for `username` and `path` matches, as git's
        /// own helpers match: each one the request sets must be equal.
        func matches(username requested: String?, path requestedPath: String?) -> Bool {
            (requested.map { $0 == username } ?? true) && (requestedPath.map { $0 == path } ?? true)
        }
    }

    /// The document's version; an index of another version is rebuilt.
    var version = 1
    /// The credentials, most recently stored first.
    var entries: [Entry] = []

    /// The session name of the index for `protocolName` and `host`.
    static func itemName(protocolName: String, host: String) -> String {
        "git-index:\(protocolName)://\(host)"
    }

    /// The session name of the mark saying every git credential is indexed.
    static let completeMarkName = "git-index"

    /// The prefix of every index's session name.
    static let itemPrefix = "git-index:"

    /// Decodes a stored index.
    /// - Returns: The index, or nil when it is not one this version reads (it is then rebuilt).
    static func decode(_ value: SecretBytes) -> GitCredentialIndex? {
        let index = value.withUnsafeBytes { try? JSONDecoder().decode(GitCredentialIndex.self, from: Data($0)) } // unreadable: rebuilt
        return index?.version == 1 ? index : nil
    }

    /// The index as the value of its session.
    func encoded() throws -> SecretBytes {
        do {
            return SecretBytes(try JSONEncoder().encode(self))
        } catch {
            throw LatchkeyError(.internal, "the git credential index could not be encoded")
        }
    }

    /// Puts `entry` first, replacing the entry of the same username and path.
    mutating func insert(_ entry: Entry) {
        remove(username: entry.username, path: entry.path)
        entries.insert(entry, at: 0)
    }

    /// Removes the entry of `username` and `path`.
    mutating func remove(username: String, path: String?) {
        entries.removeAll { $0.username == username && $0.path == path }
    }

    /// The entry of `username` and `path`, if any.
    func entry(username: String, path: String?) -> Entry? {
        entries.first { $0.username == username && $0.path == path }
    }
}
