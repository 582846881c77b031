import Latchkey

/// Where a git credential is used: protocol, host (with port) and, when git
/// sends one (`credential.useHttpPath`), path. It names the vault items that
/// hold the credential: the password is the session `git:<protocol>://<host>[/<path>]`
/// of the account `<username>`, and an OAuth refresh token the session
/// `git-refresh:<protocol>://<host>[/<path>]` of the same account. These names
/// are those Latchkey 0.1 used, so its credentials are still found.
struct GitCredentialTarget: Hashable, Sendable {
    var protocolName: String
    var host: String
    var path: String?

    static let passwordPrefix = "git:"
    static let refreshTokenPrefix = "git-refresh:"

    /// The target of a message, or nil when it lacks a protocol or a host.
    init?(_ message: GitCredentialMessage) {
        guard let protocolName = message.protocolName, !protocolName.isEmpty, let host = message.host else {
            return nil
        }
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
        return parse(location: rest).map { ($0, isRefreshToken) }
    }

    /// Parses `<protocol>://<host>[/<path>]`, as item names end.
    static func parse(location name: Substring) -> GitCredentialTarget? {
        guard let separator = name.firstRange(of: "://") else { return nil }
        let protocolName = String(name[..<separator.lowerBound])
        let location = name[separator.upperBound...]
        guard !protocolName.isEmpty else { return nil }
        if let slash = location.firstIndex(of: "/") {
            let path = String(location[location.index(after: slash)...])
            return GitCredentialTarget(protocolName: protocolName, host: String(location[..<slash]), path: path)
        }
        return GitCredentialTarget(protocolName: protocolName, host: String(location), path: nil)
    }

    private var location: String {
        "\(protocolName)://\(host)" + (path.map { "/" + $0 } ?? "")
    }

    /// The session name of the password item.
    var passwordItemName: String { GitCredentialTarget.passwordPrefix + location }

    /// The session name of the refresh-token item.
    var refreshTokenItemName: String { GitCredentialTarget.refreshTokenPrefix + location }
}
