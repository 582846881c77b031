/// Latchkey's schema and the attributes and labels of its Secret Service items.
///
/// Attributes may be stored unencrypted by a Secret Service provider, so they
/// hold only values that are not secret: the app id, the item kind, a keyed
/// pseudonym of the account and the item name. Labels name only the kind and
/// the app id. `docs/SECRET-SERVICE.md` documents them for other tools.
enum SecretServiceAttributes {
    /// The schema name, stored by libsecret in the `xdg:schema` attribute.
    static let schemaName = "io.github.latchkey.Item"
    /// The app id attribute.
    static let app = "app"
    /// The item kind attribute.
    static let kind = "kind"
    /// The account pseudonym attribute.
    static let account = "account"
    /// The item name attribute.
    static let name = "name"

    /// The schema every Latchkey item carries.
    static let schema = LibSecret.Schema(name: schemaName, attributes: [app, kind, account, name])

    /// The attributes matching every item of an app, or of one kind of it.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - kind: Only this kind; every kind when nil.
    /// - Returns: Attributes for a search.
    static func matching(_ appID: AppID, kind: ItemKey.Kind? = nil) -> [String: String] {
        var attributes = [app: appID.rawValue]
        if let kind { attributes[self.kind] = kind.rawValue }
        return attributes
    }

    /// The full attributes of one item.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - kind: The item kind.
    ///   - accountPseudonym: The account's pseudonym (empty only for the pseudonym key itself).
    ///   - name: The item name.
    /// - Returns: Attributes for storing or finding exactly that item.
    static func item(_ appID: AppID, kind: ItemKey.Kind, accountPseudonym: String, name: String) -> [String: String] {
        [app: appID.rawValue, self.kind: kind.rawValue, account: accountPseudonym, self.name: name]
    }

    /// A label that tells a person what the item is without naming the account.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - kind: The item kind.
    /// - Returns: A label such as "Latchkey session for com.example.notes".
    static func label(_ appID: AppID, kind: ItemKey.Kind) -> String {
        "Latchkey \(kind.rawValue) for \(appID.rawValue)"
    }
}
