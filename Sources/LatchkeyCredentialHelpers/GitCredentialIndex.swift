import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
struct GitCredentialIndex: Equatable, Sendable {
    /// One stored credential of the host.
    struct Entry: Equatable, Sendable {
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

    /// The longest index decoded (4 MiB): one entry per credential of a host, each a
    /// username and a path of at most 1 MiB (git's whole message), so room for a few
    /// such entries or thousands of ordinary ones; a longer one is not read but rebuilt.
    static let maximumLength = 4 << 20

    /// Decodes a stored index: `{"version":1,"entries":[{"username":...,"path":...,
    /// "expiry":...,"hasRefreshToken":...}]}`, `path` and `expiry` left out when absent
    /// (read with Latchkey's own JSON parser: with Foundation's `JSONDecoder` a `git
    /// credential fill` took 0.9 ms longer, 61 runs timed in turn).
    /// - Returns: The index, or nil when it is not one this version reads (it is then rebuilt).
    static func decode(_ value: SecretBytes) -> GitCredentialIndex? {
        guard value.count <= maximumLength,
            case .object(let document)? = value.withUnsafeBytes({
                try? JSONValue.parse($0, source: "the git credential index")
            }),
            document["version"] == .integer(1), case .array(let items)? = document["entries"]
        else { return nil }
        var entries: [Entry] = []
        for item in items {
            guard case .object(let fields) = item, case .string(let username)? = fields["username"],
                case .bool(let hasRefreshToken)? = fields["hasRefreshToken"]
            else { return nil }
            var entry = Entry(username: username, path: nil, expiry: nil, hasRefreshToken: hasRefreshToken)
            switch fields["path"] {
            case nil, .null?: break
            case .string(let path)?: entry.path = path
            default: return nil
            }
            switch fields["expiry"] {
            case nil, .null?: break
            case .integer(let expiry)?: entry.expiry = expiry
            default: return nil
            }
            entries.append(entry)
        }
        return GitCredentialIndex(entries: entries)
    }

    /// The index as the value of its session, in the form ``decode(_:)`` reads.
    func encoded() -> SecretBytes {
        let items = entries.map { entry in
            var fields = ["\"username\":" + JSONText.quoted(entry.username)]
            if let path = entry.path { fields.append("\"path\":" + JSONText.quoted(path)) }
            if let expiry = entry.expiry { fields.append("\"expiry\":\(expiry)") }
            fields.append("\"hasRefreshToken\":\(entry.hasRefreshToken)")
            return "{" + fields.joined(separator: ",") + "}"
        }
        return SecretBytes(utf8: "{\"version\":\(version),\"entries\":[" + items.joined(separator: ",") + "]}")
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
