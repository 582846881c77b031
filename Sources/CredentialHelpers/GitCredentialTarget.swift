import Latchkey

/// Where a git credential is used: protocol, host (with port) and, when git
/// sends one (`credential.useHttpPath`), path. It names the vault items that
/// hold the credential: the password is the session `git:<protocol>://<host>[/<path>]`
/// of the account `<username>`, and an OAuth refresh token the session
/// `git-refresh:<protocol>://<host>[/<path>]` of the same account.
struct GitCredentialTarget: Hashable, Sendable {
    var protocolName: String
    var host: String
    var path: String?

    static let passwordPrefix = "git:"
    static let refreshTokenPrefix = "git-refresh:"

    /// The target of a message, or nil when it lacks a protocol or a host.
    init?(_ message: GitCredentialMessage) {
        guard let protocolName = message.protocolName, !protocolName.isEmpty, let host = message.host else { return nil }
        self.init(protocolName: protocolName, host: host, path: message.path.flatMap { $0.isEmpty ? nil : $0 })
    }

    init(protocolName: String, host: String, path: String?) {
        self.protocolName = protocolName
        self.host = host
        self.path = path
    }

    /// Parses an item name written by ``passwordItemName`` or ``refreshTokenItemName``.
    /// - Returns: The target and whether the item holds a refresh token; nil for other items.
    static func parse(itemName name: String) -> (target: GitCredentialTarget, isRefreshToken: Bool)? {
        let isRefreshToken = name.hasPrefix(refreshTokenPrefix)
        guard isRefreshToken || name.hasPrefix(passwordPrefix) else { return nil }
        let rest = name.dropFirst(isRefreshToken ? refreshTokenPrefix.count : passwordPrefix.count)
        guard let separator = rest.firstRange(of: "://") else { return nil }
        let protocolName = String(rest[..<separator.lowerBound])
        let location = rest[separator.upperBound...]
        guard !protocolName.isEmpty else { return nil }
        if let slash = location.firstIndex(of: "/") {
            let path = String(location[location.index(after: slash)...])
            return (GitCredentialTarget(protocolName: protocolName, host: String(location[..<slash]), path: path), isRefreshToken)
        }
        return (GitCredentialTarget(protocolName: protocolName, host: String(location), path: nil), isRefreshToken)
    }

    private var location: String {
        "\(protocolName)://\(host)" + (path.map { "/" + $0 } ?? "")
    }

    /// The session name of the password item.
    var passwordItemName: String { GitCredentialTarget.passwordPrefix + location }

    /// The session name of the refresh-token item.
    var refreshTokenItemName: String { GitCredentialTarget.refreshTokenPrefix + location }

    /// Whether this stored target matches what a request asks for, as git's own
    /// helpers match: each attribute the request sets must be equal; an
    /// attribute it leaves out matches anything.
    func matches(_ request: GitCredentialMessage) -> Bool {
        (request.protocolName.map { $0 == protocolName } ?? true)
            && (request.host.map { $0 == host } ?? true)
            && (request.path.map { $0.isEmpty || $0 == path } ?? true)
    }
}
