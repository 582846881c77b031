import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// git's credential-helper protocol (see the gitcredentials and git-credential
/// manual pages) over a ``Vault``, so the policy, the backend fallback and the
/// audit trail apply to git's credentials as to any other session.
///
/// A credential is kept as sessions of the account `<username>` (an empty
/// username is the empty account): the password as
/// `git:<protocol>://<host>[/<path>]`, and an OAuth refresh token as
/// `git-refresh:<protocol>://<host>[/<path>]`. The password session expires
/// at git's `password_expiry_utc` or at the policy's cap on session life,
/// whichever comes first; git's own expiry is kept in the host's
/// ``GitCredentialIndex`` and is the only one ever reported back to git. So one
/// host can hold several usernames, and a path-specific credential (git's
/// `credential.useHttpPath`) is kept apart from the host's.
///
/// `get`, `store` and `erase` read the index of the request's protocol and
/// host and then only the sessions it names, so their cost does not grow with
/// the number of credentials stored for other hosts.
///
/// Requests match as in git's own helpers: each of protocol, host, path and
/// username that the request sets must be equal; one it leaves out matches anything.
package struct GitCredentialHelper: Sendable {
    /// The vault holding the credentials.
    package let vault: Vault

    /// Creates a helper over `vault`.
    /// - Parameter vault: The vault holding the credentials.
    package init(vault: Vault) {
        self.vault = vault
    }

    /// The credential that matches `request`, preferring one with an unexpired
    /// password, then the most recently stored.
    /// - Parameter request: What git knows: protocol, host, maybe path and username.
    /// - Returns: The username (possibly empty), password, refresh token and the
    ///   `password_expiry_utc` git stored (only those that are set), or nil when
    ///   nothing matches. An expired password is never returned (its session is
    ///   deleted and audited); its refresh token still is.
    /// - Throws: `LatchkeyError` when the vault cannot answer.
    package func get(_ request: GitCredentialMessage) throws -> GitCredentialMessage? {
        var refreshOnly: GitCredentialMessage?
        for scope in try scopes(matching: request) {
            var index = try index(of: scope)
            var stale: [GitCredentialIndex.Entry] = []
            var found: GitCredentialMessage?
            for entry in index.entries where entry.matches(username: request.username, path: Self.path(of: request)) {
                let credential = try read(entry, in: scope)
                if credential.password != nil {
                    found = credential
                    break
                }
                if credential.oauthRefreshToken == nil {
                    stale.append(entry) // erased by a logout, or expired just now: drop it from the index
                } else if refreshOnly == nil {
                    refreshOnly = credential
                }
            }
            if !stale.isEmpty {
                for entry in stale { index.remove(username: entry.username, path: entry.path) }
                try save(index, of: scope)
            }
            if let found { return found }
        }
        return refreshOnly
    }

    /// Stores a credential git has just used successfully, replacing the one of
    /// the same target and username. An empty username is stored as such. Input
    /// without protocol, host, username or password, or whose `password_expiry_utc`
    /// has passed, is ignored, as git's own
    /// helpers do; `capability[]`, `wwwauth[]`, `state[]` and unknown attributes
    /// are never stored.
    /// - Parameter credential: What git sends to `store`.
    /// - Returns: Whether anything was stored (false for input that is ignored).
    /// - Throws: `LatchkeyError` when the vault cannot store it.
    @discardableResult
    package func store(_ credential: GitCredentialMessage) throws -> Bool {
        guard let scope = GitCredentialScope(credential), let target = GitCredentialTarget(credential),
            let username = credential.username, let password = credential.password
        else { return false }
        // git itself approves no credential whose password_expiry_utc has passed; neither does its helper.
        if let expiry = credential.passwordExpiry, expiry <= Date() { return false }
        var index = try index(of: scope)
        let previous = index.entry(username: username, path: target.path)
        try vault.saveSession(
            password, name: target.passwordItemName, account: username, expires: credential.passwordExpiry)
        if let refreshToken = credential.oauthRefreshToken {
            try vault.saveSession(refreshToken, name: target.refreshTokenItemName, account: username)
        } else if previous?.hasRefreshToken == true {
            try vault.deleteSession(named: target.refreshTokenItemName, account: username)
        }
        let expiry = credential.passwordExpiry.flatMap { Int64(exactly: $0.timeIntervalSince1970.rounded(.down)) }
        index.insert(
            .init(
                username: username, path: target.path, expiry: expiry,
                hasRefreshToken: credential.oauthRefreshToken != nil))
        try save(index, of: scope)
        return true
    }

    /// Erases the credentials that match `request`, and only those: when the
    /// request carries a password (git sends the one that was rejected), a
    /// stored credential with a different password is kept. A request that
    /// names none of protocol, host, path and username erases nothing.
    /// - Parameter request: What git sends to `erase`.
    /// - Returns: How many credentials were erased.
    /// - Throws: `LatchkeyError` when the vault cannot answer.
    @discardableResult
    package func erase(_ request: GitCredentialMessage) throws -> Int {
        let named = [request.protocolName, request.host, request.path, request.username].contains {
            !($0 ?? "").isEmpty
        }
        guard named else { return 0 }
        var erased = 0
        for scope in try scopes(matching: request) {
            var index = try index(of: scope)
            let before = index
            for entry in index.entries where entry.matches(username: request.username, path: Self.path(of: request)) {
                let target = scope.target(path: entry.path)
                if let rejected = request.password {
                    let stored = try vault.session(named: target.passwordItemName, account: entry.username)
                    guard stored?.value == rejected else { continue }
                }
                try vault.deleteSession(named: target.passwordItemName, account: entry.username)
                if entry.hasRefreshToken {
                    try vault.deleteSession(named: target.refreshTokenItemName, account: entry.username)
                }
                index.remove(username: entry.username, path: entry.path)
                erased += 1
            }
            if index != before { try save(index, of: scope) }
        }
        return erased
    }

    // MARK: Reading one credential

    /// The request's path, an empty one meaning none (git's `useHttpPath` off).
    private static func path(of request: GitCredentialMessage) -> String? {
        request.path.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The sessions of `entry`: its password (with git's expiry) and refresh token, each nil when absent.
    private func read(_ entry: GitCredentialIndex.Entry, in scope: GitCredentialScope) throws -> GitCredentialMessage {
        let target = scope.target(path: entry.path)
        let password = try vault.session(named: target.passwordItemName, account: entry.username)
        var credential = GitCredentialMessage()
        credential.username = entry.username
        credential.password = password?.value
        credential.passwordExpiry =
            password == nil ? nil : entry.expiry.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        if entry.hasRefreshToken {
            credential.oauthRefreshToken = try vault.session(
                named: target.refreshTokenItemName, account: entry.username)?.value
        }
        return credential
    }

    // MARK: The indexes

    /// The scopes a request covers: its own protocol and host, or, when it
    /// leaves either out (rare: git always sends both for HTTP), every indexed
    /// scope that matches, most recently stored first.
    private func scopes(matching request: GitCredentialMessage) throws -> [GitCredentialScope] {
        if let scope = GitCredentialScope(request) { return [scope] }
        try ensureIndexed()
        return try vault.sessions(account: "")
            .compactMap { info in GitCredentialScope(indexItemName: info.name).map { (info.created, $0) } }
            .filter { $0.1.matches(request) }
            .sorted { $0.0 > $1.0 }
            .map(\.1)
    }

    /// The index of `scope`: the stored one; an empty one when none is stored
    /// and the namespace is marked as fully indexed; else the one rebuilt from the stored sessions.
    private func index(of scope: GitCredentialScope) throws -> GitCredentialIndex {
        let stored = try vault.bookkeepingSession(named: scope.indexItemName, account: "")
        if let stored, let index = GitCredentialIndex.decode(stored.value) { return index }
        if stored == nil, try vault.bookkeepingSession(named: GitCredentialIndex.completeMarkName, account: "") != nil {
            return GitCredentialIndex()
        }
        return try rebuildIndexes()[scope] ?? GitCredentialIndex()
    }

    /// Rebuilds the indexes unless the namespace is marked as fully indexed.
    private func ensureIndexed() throws {
        if try vault.bookkeepingSession(named: GitCredentialIndex.completeMarkName, account: "") == nil {
            _ = try rebuildIndexes()
        }
    }

    /// Rebuilds every index from the `git:` and `git-refresh:` sessions stored
    /// (keeping git's expiries from the indexes that are there), removes the
    /// indexes of hosts with no credential left, then marks the namespace as
    /// fully indexed. This reads every session once: it runs when the mark is
    /// missing (credentials of Latchkey 0.1, or after a logout took the indexes).
    /// - Returns: The new indexes.
    private func rebuildIndexes() throws -> [GitCredentialScope: GitCredentialIndex] {
        var previous: [GitCredentialScope: GitCredentialIndex] = [:]
        var found: [GitCredentialScope: [(created: Date, entry: GitCredentialIndex.Entry)]] = [:]
        for info in try vault.sessions() {
            if info.account.isEmpty, let scope = GitCredentialScope(indexItemName: info.name) {
                let stored = try vault.bookkeepingSession(named: info.name, account: "")
                previous[scope] = stored.flatMap { GitCredentialIndex.decode($0.value) } ?? GitCredentialIndex()
                continue
            }
            guard let (target, isRefreshToken) = GitCredentialTarget.parse(itemName: info.name) else { continue }
            let scope = GitCredentialScope(protocolName: target.protocolName, host: target.host)
            var list = found[scope] ?? []
            if let at = list.firstIndex(where: { $0.entry.username == info.account && $0.entry.path == target.path }) {
                list[at].created = max(list[at].created, info.created)
                list[at].entry.hasRefreshToken = list[at].entry.hasRefreshToken || isRefreshToken
                if !isRefreshToken {
                    list[at].entry.expiry = previous[scope]?.entry(username: info.account, path: target.path)?.expiry
                }
            } else {
                let expiry =
                    isRefreshToken ? nil : previous[scope]?.entry(username: info.account, path: target.path)?.expiry
                list.append(
                    (
                        info.created,
                        .init(
                            username: info.account, path: target.path, expiry: expiry, hasRefreshToken: isRefreshToken)
                    ))
            }
            found[scope] = list
        }
        var rebuilt: [GitCredentialScope: GitCredentialIndex] = [:]
        for (scope, list) in found {
            let index = GitCredentialIndex(entries: list.sorted { $0.created > $1.created }.map(\.entry))
            if index != previous[scope] { try save(index, of: scope) }
            rebuilt[scope] = index
        }
        for scope in previous.keys where found[scope] == nil {
            try save(GitCredentialIndex(), of: scope)
        }
        try vault.saveSession(SecretBytes(utf8: "1"), name: GitCredentialIndex.completeMarkName, account: "")
        return rebuilt
    }

    /// Stores `index` as its scope's session, or deletes that session when the index is empty.
    private func save(_ index: GitCredentialIndex, of scope: GitCredentialScope) throws {
        if index.entries.isEmpty {
            try vault.deleteSession(named: scope.indexItemName, account: "")
        } else {
            try vault.saveSession(index.encoded(), name: scope.indexItemName, account: "")
        }
    }
}
