/// A protocol and host (with port): the unit a ``GitCredentialIndex`` covers.
struct GitCredentialScope: Hashable, Sendable {
    /// The protocol, such as `https`; never empty.
    var protocolName: String
    /// The host, with a port when there is one; may be empty, as in git.
    var host: String

    /// The scope a request names, or nil when it lacks a protocol or a host.
    init?(_ message: GitCredentialMessage) {
        guard let protocolName = message.protocolName, !protocolName.isEmpty, let host = message.host else {
            return nil
        }
        self.init(protocolName: protocolName, host: host)
    }

    /// The scope of an index's session name, or nil for any other name.
    init?(indexItemName name: String) {
        guard name.hasPrefix(GitCredentialIndex.itemPrefix),
            let target = GitCredentialTarget.parse(location: name.dropFirst(GitCredentialIndex.itemPrefix.count)),
            target.path == nil
        else { return nil }
        self.init(protocolName: target.protocolName, host: target.host)
    }

    init(protocolName: String, host: String) {
        self.protocolName = protocolName
        self.host = host
    }

    /// The session name of this scope's index.
    var indexItemName: String {
        GitCredentialIndex.itemName(protocolName: protocolName, host: host)
    }

    /// The target of a credential of this scope at `path`.
    func target(path: String?) -> GitCredentialTarget {
        GitCredentialTarget(protocolName: protocolName, host: host, path: path)
    }

    /// Whether a request that leaves out its protocol or host matches this scope:
    /// what the request sets must be equal.
    func matches(_ request: GitCredentialMessage) -> Bool {
        (request.protocolName.map { $0.isEmpty || $0 == protocolName } ?? true)
            && (request.host.map { $0 == host } ?? true)
    }
}
