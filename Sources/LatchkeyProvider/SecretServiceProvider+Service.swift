import Latchkey

// org.freedesktop.Secret.Service, at /org/freedesktop/secrets.
extension SecretServiceProvider {
    func serviceCall(_ call: MethodCall) throws(ProviderError) -> [DBusValue] {
        let arguments = call.arguments
        switch call.method {
        case "OpenSession":
            guard let algorithm = arguments.first??.string, let input = arguments.last ?? nil else {
                throw .invalidArgs("OpenSession takes an algorithm and its input")
            }
            let keyPair = algorithm == ProviderSession.dh ? takeSpareKeyPair() : nil
            let (session, output) = try ProviderSession.open(
                algorithm: algorithm, input: input, owner: call.sender, keyPair: keyPair)
            return [output, .objectPath(try addSession(session))]
        case "CreateCollection":
            guard let properties = arguments.first??.dictionary, let alias = arguments.last??.string else {
                throw .invalidArgs("CreateCollection takes properties and an alias")
            }
            guard alias.isEmpty || Self.isAliasName(alias) else {
                throw .invalidArgs("an alias is made of letters, digits and _")
            }
            if !alias.isEmpty, let existing = store.aliases[alias], store.collections[existing] != nil {
                return [.objectPath(ObjectPath.collection(id: existing)), .objectPath(ObjectPath.nothing)]
            }
            if store.isLocked { throw .isLocked(ObjectPath.base) }
            guard allowsClientCollections || alias == "default" else {
                throw .accessDenied("the policy lets clients use the collections default and session only")
            }
            let label = properties["org.freedesktop.Secret.Collection.Label"]?.unboxed.string ?? ""
            try Self.checkSizes(label: label, attributes: nil)
            let id = try changing { try store.createCollection(label: label, alias: alias, for: caller(call.sender)) }
            do { try registerCollection(id) } catch {
                log("secret service: cannot serve a new collection: \(error.message)")
            }
            let path = ObjectPath.collection(id: id)
            bus.emit(ObjectPath.base, "org.freedesktop.Secret.Service", "CollectionCreated", [.objectPath(path)])
            propertiesChanged(ObjectPath.base, "org.freedesktop.Secret.Service", ["Collections"])
            return [.objectPath(path), .objectPath(ObjectPath.nothing)]
        case "SearchItems":
            guard let attributes = arguments.first??.stringDictionary else {
                throw .invalidArgs("SearchItems takes a dictionary of strings")
            }
            let found = store.search(attributes).map(ObjectPath.item).sorted()
            return [.paths(found.filter { !isLockedPath($0) }), .paths(found.filter(isLockedPath))]
        case "Unlock":
            guard let objects = arguments.first??.paths else { throw .invalidArgs("Unlock takes object paths") }
            return unlock(objects, for: call.sender)
        case "Lock":
            guard let objects = arguments.first??.paths else { throw .invalidArgs("Lock takes object paths") }
            return lock(objects)
        case "GetSecrets":
            guard let items = arguments.first??.paths, let sessionPath = arguments.last??.objectPath else {
                throw .invalidArgs("GetSecrets takes item paths and a session")
            }
            let session = try session(sessionPath, of: call.sender)
            var secrets: [DBusValue] = []
            if let locked = items.first(where: isLockedPath) { throw .isLocked(locked) }
            for path in items {
                guard let ref = itemRef(path), let info = store.info(ref) else { continue }
                guard let secret = try reading({ try store.secret(ref, for: caller(call.sender)) }) else { continue }
                let value = try session.encode(secret, contentType: info.contentType, path: sessionPath)
                secrets.append(.dictEntry(.objectPath(path), value))
            }
            return [.array("{o(oayays)}", secrets)]
        case "ReadAlias":
            guard let name = arguments.first??.string else { throw .invalidArgs("ReadAlias takes a name") }
            let path = collectionID(ObjectPath.base + "/aliases/" + name).map { ObjectPath.collection(id: $0) }
            return [.objectPath(path ?? ObjectPath.nothing)]
        case "SetAlias":
            guard let name = arguments.first??.string, let path = arguments.last??.objectPath,
                Self.isAliasName(name)
            else { throw .invalidArgs("SetAlias takes an alias (letters, digits and _) and a collection") }
            if path == ObjectPath.nothing {
                try changing { try store.setAlias(name, to: nil, for: caller(call.sender)) }
            } else {
                guard let id = collectionID(path) else { throw .noSuchObject(path) }
                if isLockedPath(path) { throw .isLocked(path) }
                try changing { try store.setAlias(name, to: id, for: caller(call.sender)) }
            }
            return []
        default:
            throw .unknownMethod("no method \(call.method)")
        }
    }

    /// Whether `name` can be an alias: the last element of an object path (ASCII letters, digits and `_`).
    static func isAliasName(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
            }
    }

    /// Runs a change of the store; its failure is the client's `Failed` (nothing changed then).
    func changing<Result>(_ body: () throws -> Result) throws(ProviderError) -> Result {
        do { return try body() } catch { throw .failed(error.message) }
    }

    /// Runs a read of the store; its failure is the client's `Failed`.
    func reading<Result>(_ body: () throws -> Result) throws(ProviderError) -> Result {
        do { return try body() } catch { throw .failed(error.message) }
    }

    /// The secret and content type of an `(oayays)` a client sent, decoded in its session.
    /// - Throws: `NoSession` when the session is not the client's open one; `InvalidArgs` for a malformed secret.
    func secretArgument(_ value: DBusValue?, sender: String) throws(ProviderError) -> (SecretBytes, String) {
        guard case .tuple(let fields)? = value, fields.count == 4, let sessionPath = fields[0].objectPath,
            case .bytes(let parameters) = fields[1], case .bytes(let secret) = fields[2],
            let contentType = fields[3].string
        else { throw .invalidArgs("a secret is (session, parameters, value, content type)") }
        let session = try session(sessionPath, of: sender)
        return (try session.decode(parameters: parameters, value: secret), contentType)
    }
}
