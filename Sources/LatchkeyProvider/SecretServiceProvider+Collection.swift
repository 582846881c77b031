import Latchkey

// org.freedesktop.Secret.Collection, at /org/freedesktop/secrets/collection/ID and at each alias.
extension SecretServiceProvider {
    func collectionCall(_ call: MethodCall, _ id: String) throws(ProviderError) -> [DBusValue] {
        let arguments = call.arguments
        let path = ObjectPath.collection(id: id)
        switch call.method {
        case "Delete":
            try changing { try store.deleteCollection(id, for: caller(call.sender)) }
            if store.collections[id] == nil {
                unregisterCollection(id)
                bus.emit(ObjectPath.base, "org.freedesktop.Secret.Service", "CollectionDeleted", [.objectPath(path)])
                propertiesChanged(ObjectPath.base, "org.freedesktop.Secret.Service", ["Collections"])
            }
            return [.objectPath(ObjectPath.nothing)]
        case "SearchItems":
            guard let attributes = arguments.first??.stringDictionary else {
                throw .invalidArgs("SearchItems takes a dictionary of strings")
            }
            let found = store.search(attributes).filter { $0.collection == id }.map(ObjectPath.item).sorted()
            return [.paths(found)]
        case "CreateItem":
            guard arguments.count == 3, let properties = arguments[0]?.dictionary,
                case .boolean(let replace)? = arguments[2]
            else { throw .invalidArgs("CreateItem takes properties, a secret and whether to replace") }
            let label = properties["org.freedesktop.Secret.Item.Label"]?.unboxed.string ?? ""
            var attributes: [String: String] = [:]
            if let given = properties["org.freedesktop.Secret.Item.Attributes"] {
                guard let strings = given.unboxed.stringDictionary else {
                    throw .invalidArgs("org.freedesktop.Secret.Item.Attributes is a dictionary of strings")
                }
                attributes = strings
            }
            try Self.checkSizes(label: label, attributes: attributes)
            let (secret, contentType) = try secretArgument(arguments[1], sender: call.sender)
            let (ref, created) = try changing {
                try store.createItem(
                    in: id, label: label, attributes: attributes, secret: secret, contentType: contentType,
                    replace: replace, for: caller(call.sender))
            }
            if created {
                bus.emit(path, "org.freedesktop.Secret.Collection", "ItemCreated", [.objectPath(ObjectPath.item(ref))])
                propertiesChanged(path, "org.freedesktop.Secret.Collection", ["Items", "Modified"])
            } else {
                itemChanged(ref, properties: ["Label", "Modified"])
            }
            return [.objectPath(ObjectPath.item(ref)), .objectPath(ObjectPath.nothing)]
        default:
            throw .unknownMethod("no method \(call.method)")
        }
    }
}
