/// An error a client is answered with: the Secret Service spec's errors and D-Bus's own,
/// each with its D-Bus name in one place. Its message never holds a secret, an attribute or a label.
struct ProviderError: Error {
    /// The D-Bus error name.
    let name: String
    /// What went wrong, for the client.
    let message: String

    /// No such session, or one that was closed or belongs to another client.
    static func noSession(_ path: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.Secret.Error.NoSession", message: "no session \(path)")
    }

    /// No such collection or item.
    static func noSuchObject(_ path: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: "no such object \(path)")
    }

    /// The object is locked.
    static func isLocked(_ path: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.Secret.Error.IsLocked", message: "\(path) is locked")
    }

    /// An argument the method cannot take.
    static func invalidArgs(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    /// A session algorithm the provider does not offer.
    static func notSupported(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }

    /// A method or property the object does not have.
    static func unknownMethod(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
    }

    /// A client asked for more than the provider serves one client (sessions).
    static func limitsExceeded(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: message)
    }

    /// The policy does not let clients do that (`agent.secretServiceClientCollections`).
    static func accessDenied(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
    }

    /// The store failed; `message` is the library's, which holds no secret.
    static func failed(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}
