import Latchkey

// org.freedesktop.Secret.Item, at /org/freedesktop/secrets/collection/ID/ITEM.
extension SecretServiceProvider {
    func itemCall(_ call: MethodCall, _ ref: ItemRef) throws(ProviderError) -> [DBusValue] {
        let path = ObjectPath.item(ref)
        switch call.method {
        case "Delete":
            try changing { try store.delete(ref, for: caller(call.sender)) }
            let collection = ObjectPath.collection(id: ref.collection)
            bus.emit(collection, "org.freedesktop.Secret.Collection", "ItemDeleted", [.objectPath(path)])
            propertiesChanged(collection, "org.freedesktop.Secret.Collection", ["Items", "Modified"])
            return [.objectPath(ObjectPath.nothing)]
        case "GetSecret":
            guard let sessionPath = call.arguments.first??.objectPath else {
                throw .invalidArgs("GetSecret takes a session")
            }
            let session = try session(sessionPath, of: call.sender)
            guard let info = store.info(ref),
                let secret = try reading({ try store.secret(ref, for: caller(call.sender)) })
            else {
                throw .noSuchObject(path)
            }
            return [try session.encode(secret, contentType: info.contentType, path: sessionPath)]
        case "SetSecret":
            let (secret, contentType) = try secretArgument(call.arguments.first ?? nil, sender: call.sender)
            try changing { try store.update(ref, secret: secret, contentType: contentType, for: caller(call.sender)) }
            itemChanged(ref, properties: ["Modified"])
            return []
        default:
            throw .unknownMethod("no method \(call.method)")
        }
    }
}
