import Latchkey

/// git's credential-helper protocol (see the gitcredentials and git-credential
/// manual pages) over a ``Vault``, so the policy, the backend fallback and the
/// audit trail apply to git's credentials as to any other session.
///
/// A credential is kept as sessions of the account `<username>`: the password
/// as `git:<protocol>://<host>[/<path>]`, with git's `password_expiry_utc` as
/// its expiry (the policy's cap on session life applies too), and an OAuth
/// refresh token as `git-refresh:<protocol>://<host>[/<path>]`. So one host can
/// hold several usernames, and a path-specific credential (git's
/// `credential.useHttpPath`) is kept apart from the host's.
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
    /// - Returns: The username, password, `password_expiry_utc` and refresh token
    ///   (only those that are set), or nil when nothing matches. An expired
    ///   password is never returned (its item is deleted and audited); its
    ///   refresh token still is.
    /// - Throws: `LatchkeyError` when the vault cannot answer.
    package func get(_ request: GitCredentialMessage) throws -> GitCredentialMessage? {
        for candidate in try candidates(matching: request) {
            let password = try candidate.passwordItem.flatMap { try vault.session(named: $0, account: candidate.account) }
            let refreshToken = try candidate.refreshTokenItem.flatMap { try vault.session(named: $0, account: candidate.account) }
            guard password != nil || refreshToken != nil else { continue }
            var answer = GitCredentialMessage()
            answer.username = candidate.account
            answer.password = password?.value
            answer.passwordExpiry = password?.expires
            answer.oauthRefreshToken = refreshToken?.value
            return answer
        }
        return nil
    }

    /// Stores a credential git has just used successfully, replacing the one of
    /// the same target and username. Input without protocol, host, username or
    /// password is ignored, as git's own helpers do.
    /// - Parameter credential: What git sends to `store`.
    /// - Throws: `LatchkeyError` when the vault cannot store it.
    package func store(_ credential: GitCredentialMessage) throws {
        guard let target = GitCredentialTarget(credential), let username = credential.username, !username.isEmpty,
              let password = credential.password else { return }
        try vault.saveSession(password, name: target.passwordItemName, account: username, expires: credential.passwordExpiry)
        if let refreshToken = credential.oauthRefreshToken {
            try vault.saveSession(refreshToken, name: target.refreshTokenItemName, account: username)
        } else if try vault.sessions(account: username).contains(where: { $0.name == target.refreshTokenItemName }) {
            try vault.deleteSession(named: target.refreshTokenItemName, account: username)
        }
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
        let named = [request.protocolName, request.host, request.path, request.username].contains { !($0 ?? "").isEmpty }
        guard named else { return 0 }
        var erased = 0
        for candidate in try candidates(matching: request) {
            if let rejected = request.password {
                let stored = try candidate.passwordItem.flatMap { try vault.session(named: $0, account: candidate.account) }
                guard stored?.value == rejected else { continue }
            }
            for name in [candidate.passwordItem, candidate.refreshTokenItem].compactMap({ $0 }) {
                try vault.deleteSession(named: name, account: candidate.account)
            }
            erased += 1
        }
        return erased
    }

    /// One stored credential: an account and target with its items.
    private struct Candidate {
        var account: String
        var target: GitCredentialTarget
        var passwordItem: String?
        var refreshTokenItem: String?
        var latest: SessionInfo
    }

    /// The stored credentials matching `request`: those with a password first,
    /// then the most recently stored, then by username.
    private func candidates(matching request: GitCredentialMessage) throws -> [Candidate] {
        let username = request.username.flatMap { $0.isEmpty ? nil : $0 }
        var found: [String: Candidate] = [:]
        for info in try vault.sessions(account: username) {
            guard let (target, isRefreshToken) = GitCredentialTarget.parse(itemName: info.name), target.matches(request) else { continue }
            let key = info.account + "\u{0}" + target.passwordItemName
            var candidate = found[key] ?? Candidate(account: info.account, target: target, latest: info)
            if isRefreshToken { candidate.refreshTokenItem = info.name } else { candidate.passwordItem = info.name }
            if info.created > candidate.latest.created { candidate.latest = info }
            found[key] = candidate
        }
        return found.values.sorted { a, b in
            if (a.passwordItem != nil) != (b.passwordItem != nil) { return a.passwordItem != nil }
            if a.latest.created != b.latest.created { return a.latest.created > b.latest.created }
            return (a.account, a.target.passwordItemName) < (b.account, b.target.passwordItemName)
        }
    }
}
