import Latchkey

/// docker's credential-helper protocol (docker-credential-helpers: `store`,
/// `get`, `erase`, `list`) over a ``Vault``, so the policy, the backend
/// fallback, the audit trail and logout apply to registry credentials as to
/// any other session.
///
/// A credential is the session `docker:<ServerURL>` of the account
/// `<Username>` (`<token>` for an identity token), holding the secret; the
/// server URL is kept as docker gave it, because `list` must give it back so
/// (docker keys Docker Hub by `https://index.docker.io/v1/`). Requests match by
/// ``DockerServerURL/key``, so a scheme or a trailing slash does not make a
/// second registry, and each registry holds one credential.
package struct DockerCredentialHelper: Sendable {
    /// The vault holding the credentials.
    package let vault: Vault

    /// The message docker recognises as "nothing stored" (`credentials.errCredentialsNotFoundMessage`).
    package static let notFoundMessage = "credentials not found in native keychain"

    /// The prefix of every docker session's name.
    static let namePrefix = "docker:"

    /// Creates a helper over `vault`.
    /// - Parameter vault: The vault holding the credentials.
    package init(vault: Vault) {
        self.vault = vault
    }

    /// Stores a credential, replacing the registry's previous one (whatever its
    /// username or spelling of the URL).
    /// - Parameter credential: What docker sends to `store`.
    /// - Throws: `LatchkeyError` when the vault cannot store it.
    package func store(_ credential: DockerCredential) throws {
        let name = Self.namePrefix + credential.serverURL.original
        try vault.saveSession(credential.secret, name: name, account: credential.username)
        for stored in try stored(matching: credential.serverURL)
        where stored.name != name || stored.account != credential.username {
            try vault.deleteSession(named: stored.name, account: stored.account)
        }
    }

    /// The credential of a registry.
    /// - Parameter serverURL: The registry docker asks for.
    /// - Returns: The credential, or nil when none is stored (or it expired).
    /// - Throws: `LatchkeyError` when the vault cannot answer.
    package func get(_ serverURL: DockerServerURL) throws -> DockerCredential? {
        for stored in try stored(matching: serverURL) {
            if let session = try vault.session(named: stored.name, account: stored.account) {
                return DockerCredential(serverURL: serverURL, username: stored.account, secret: session.value)
            }
        }
        return nil
    }

    /// Erases the credential of a registry; erasing one that is not there succeeds.
    /// - Parameter serverURL: The registry.
    /// - Returns: How many sessions were erased.
    /// - Throws: `LatchkeyError` when the vault cannot answer.
    @discardableResult
    package func erase(_ serverURL: DockerServerURL) throws -> Int {
        var erased = 0
        for stored in try stored(matching: serverURL) {
            if try vault.deleteSession(named: stored.name, account: stored.account) { erased += 1 }
        }
        return erased
    }

    /// Every registry with a credential, as docker gave its URL, and the username.
    /// - Returns: The server URLs and usernames, by URL.
    /// - Throws: `LatchkeyError` when the vault cannot answer.
    package func list() throws -> [(serverURL: String, username: String)] {
        try vault.sessions().compactMap { info in
            Self.serverURL(ofSessionNamed: info.name).map { ($0.original, info.account) }
        }.sorted { $0.serverURL < $1.serverURL }
    }

    /// The stored sessions of the registry `serverURL`, most recent first.
    private func stored(matching serverURL: DockerServerURL) throws -> [SessionInfo] {
        try vault.sessions()
            .filter { Self.serverURL(ofSessionNamed: $0.name)?.key == serverURL.key }
            .sorted { $0.created > $1.created }
    }

    /// The server URL of a docker session's name, or nil for any other session.
    private static func serverURL(ofSessionNamed name: String) -> DockerServerURL? {
        guard name.hasPrefix(namePrefix) else { return nil }
        return try? DockerServerURL(String(name.dropFirst(namePrefix.count))) // not one of ours: skipped
    }
}
