/// The object paths the provider serves, as gnome-keyring lays them out.
enum ObjectPath: Equatable {
    case service
    /// A collection by its id.
    case collection(String)
    /// A collection by an alias (`/org/freedesktop/secrets/aliases/default`).
    case alias(String)
    case item(collection: String, item: String)
    case session(String)
    case prompt(String)
    /// A path the provider does not serve.
    case none

    static let base = "/org/freedesktop/secrets"
    /// "No object" where the spec returns a path: no prompt, no collection.
    static let nothing = "/"

    init(_ path: String) {
        if path == Self.base {
            self = .service
            return
        }
        guard path.hasPrefix(Self.base + "/") else {
            self = .none
            return
        }
        let parts = path.dropFirst(Self.base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
            .map(String.init)
        switch (parts.first, parts.count) {
        case ("collection", 2): self = .collection(parts[1])
        case ("collection", 3): self = .item(collection: parts[1], item: parts[2])
        case ("aliases", 2): self = .alias(parts[1])
        case ("session", 2): self = .session(parts[1])
        case ("prompt", 2): self = .prompt(parts[1])
        default: self = .none
        }
    }

    static func collection(id: String) -> String { base + "/collection/" + id }
    static func item(_ ref: ItemRef) -> String { base + "/collection/" + ref.collection + "/" + ref.item }
    static func session(id: String) -> String { base + "/session/" + id }
    static func prompt(id: String) -> String { base + "/prompt/" + id }
}
