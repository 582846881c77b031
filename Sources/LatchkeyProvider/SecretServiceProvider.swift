import Latchkey
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The Secret Service provider (docs/SECRET-SERVICE-PROVIDER.md): serves the freedesktop Secret
/// Service API (spec 0.2) on the session bus from a ``ProviderStore``, on a thread of its own,
/// taking `org.freedesktop.secrets` only when nobody owns it. Every handler runs on that
/// thread (GDBus calls them from the main context the thread iterates), so its state needs no lock.
package final class SecretServiceProvider {
    /// The well-known name of the Secret Service.
    package static let busName = "org.freedesktop.secrets"

    let bus: BusConnection
    let store: ProviderStore
    let log: @Sendable (String) -> Void
    /// Whether clients may create collections beyond `default` and `session` (the policy's
    /// `agent.secretServiceClientCollections`).
    let allowsClientCollections: Bool
    /// How long an unlock prompt waits for `latchkey unlock` before it is dismissed (the policy's
    /// `secretService.unlockTimeoutSeconds`).
    let promptDeadline: TimeInterval
    /// How long a passphrase vault stays unlocked (the policy's `agent.unlockCacheSeconds`; 0
    /// locks it again as soon as the unlock's prompts are completed).
    let unlockDuration: TimeInterval
    /// Whether a `latchkey unlock` is deriving the key on a thread of its own.
    var unlocking = false
    /// Under an `unlockDuration` of 0: the clients whose prompts the last unlock completed and
    /// that have not yet made a call that needs the key (``keyCalls``); the vault is locked again
    /// once none is left (or at the prompt deadline).
    var holds: Set<String> = []
    /// The calls that read or write a secret, so need the vault's key.
    static let keyCalls: Set<String> = ["GetSecret", "GetSecrets", "CreateItem", "SetSecret", "Delete"]
    /// The prompts `Unlock` returned that are not completed, by object path.
    var prompts: [String: PendingPrompt] = [:]
    var nextPrompt = 1
    /// Counts unlocks and locks: a timer set at an unlock locks only if nothing happened since.
    var lockGeneration = 0
    /// Open sessions by object path.
    var sessions: [String: ProviderSession] = [:]
    private var nextSession = 1
    /// The subtree of each collection (its items), by collection id.
    private var registrations: [String: UInt32] = [:]
    /// A DH key pair made while no client waited, for the next `dh` session (``takeSpareKeyPair()``):
    /// that session's client is answered after one modular exponentiation instead of two. Used
    /// once; its private exponent is in `SecretBytes`, wiped when it is let go.
    private var spareKeyPair: (privateKey: SecretBytes, publicKey: SecretBytes)?
    /// Who each client is, by unique name (never reused on a bus), for the audit trail.
    private var callers: [String: Caller] = [:]

    private init(
        bus: BusConnection, store: ProviderStore, policy: Policy, log: @escaping @Sendable (String) -> Void
    ) {
        self.bus = bus
        self.store = store
        allowsClientCollections = policy.agent.allowsClientCollections
        promptDeadline = policy.secretServiceUnlockTimeout
        unlockDuration = policy.agent.unlockCacheDuration
        self.log = log
    }

    /// Whether this process's provider owns `org.freedesktop.secrets` (the agent does not exit
    /// when idle while it does).
    package static var isServing: Bool { serving.load(ordering: .relaxed) }
    private static let serving = Atomic<Bool>(false)

    /// How another thread asks the running provider to lock its vault (``lockRunning()``); nil when none runs.
    private static let lockRequest = Mutex<(@Sendable () -> Void)?>(nil)

    /// Makes the running provider, if any, forget its passphrase vault's key, as `latchkey lock`
    /// does to the agent's: from any thread (the lock happens on the provider's, soon after).
    package static func lockRunning() {
        lockRequest.withLock { $0 }?()
    }

    /// Starts the provider on a thread of its own and returns: it connects to the session bus,
    /// and when `org.freedesktop.secrets` has an owner already, or the bus can activate a
    /// provider whose activation file is not Latchkey's (``SecretServiceActivation``), says so in
    /// `log` and stops (a running provider is never replaced, a desktop's never taken over); else it opens its vault, serves its objects and
    /// asks for the name. Whatever fails is said in `log`; the caller goes on either way.
    /// - Parameters:
    ///   - storeDirectory: Where the provider's vault lives; the user's store directory
    ///     (`VaultSettings`: `LATCHKEY_HOME`, else the default) when nil.
    ///   - log: Where the provider says what it does (the agent's log). Never given a secret.
    package static func start(storeDirectory: String? = nil, log: @escaping @Sendable (String) -> Void) {
        let serve: @Sendable () -> Void = {
            do {
                let bus = try BusConnection()
                if try bus.hasOwner(busName) {
                    log("secret service: \(busName) is owned by another provider; not serving the Secret Service")
                    return
                }
                // The bus starts the provider whose activation file it has; one not Latchkey's
                // is the desktop's (gnome-keyring, KWallet, KeePassXC): never taken over.
                if try bus.isActivatable(busName), !SecretServiceActivation.isLatchkeysOwn() {
                    log(
                        "secret service: the session bus can activate another provider of \(busName) "
                            + "(its activation file is not Latchkey's); not serving the Secret Service")
                    return
                }
                try Gcrypt.initialize()
                let settings = try VaultSettings()
                let directory = storeDirectory ?? settings.storeDirectory
                let store = try ProviderStore(
                    storeDirectory: directory, auditFailureMode: settings.policy.audit.failureMode,
                    passphrase: settings.policy.fileKeySource == .passphrase)
                let provider = SecretServiceProvider(bus: bus, store: store, policy: settings.policy, log: log)
                let handle = ProviderHandle(provider: provider)
                lockRequest.withLock {
                    $0 = { handle.provider.bus.schedule(after: 0) { handle.provider.lockVault() } }
                }
                if store.isLocked {
                    log("secret service: the vault's key is a passphrase: it is locked until `latchkey unlock`")
                }
                try provider.registerObjects()
                provider.makeSpareKeyPair()
                bus.whenClientLeaves { client in
                    provider.sessions = provider.sessions.filter { $0.value.owner != client }
                    provider.callers[client] = nil
                    provider.release(client)
                    provider.makeSpareKeyPair()
                }
                bus.ownName(busName) { acquired in
                    serving.store(acquired, ordering: .relaxed)
                    log(
                        acquired
                            ? "secret service: serving \(busName) from the vault of \(ProviderStore.appID) in \(directory)"
                            : "secret service: \(busName) is owned by another provider; waiting in the bus's queue")
                }
                bus.run()
            } catch {
                log("secret service: not serving \(busName): \(error.message)")
            }
        }
        do { try POSIX.startThread(serve) } catch { log("secret service: not serving \(busName): \(error.message)") }
    }

    /// Serves the service, the collections, the aliases and the sessions.
    private func registerObjects() throws {
        for path in ["", "/collection", "/aliases", "/session", "/prompt"] {
            try bus.register(ObjectPath.base + path, self)
        }
        for id in store.collections.keys { try registerCollection(id) }
    }

    /// Serves the items of the collections the store has, and of no others (after an unlock or a lock).
    func syncRegistrations() {
        for id in registrations.keys where store.collections[id] == nil { unregisterCollection(id) }
        for id in store.collections.keys where registrations[id] == nil {
            do { try registerCollection(id) } catch {
                log("secret service: cannot serve a collection: \(error.message)")
            }
        }
    }

    /// Serves the items of collection `id`.
    func registerCollection(_ id: String) throws {
        registrations[id] = try bus.register(ObjectPath.collection(id: id), self)
    }

    /// Stops serving the items of collection `id`.
    func unregisterCollection(_ id: String) {
        if let registration = registrations.removeValue(forKey: id) { bus.unregister(registration) }
    }

    /// The most sessions one client may have open at once (libsecret opens one).
    static let maximumSessionsPerClient = 1024
    /// The most UTF-8 bytes of a label, an attribute's name or an attribute's value (all held in memory).
    static let maximumTextLength = 64 * 1024

    /// `label` and `attributes` when each is within ``maximumTextLength``.
    /// - Throws: `InvalidArgs` for a longer one (the message says which, never its text).
    static func checkSizes(label: String?, attributes: [String: String]?) throws(ProviderError) {
        if let label, label.utf8.count > maximumTextLength {
            throw .invalidArgs("a label is at most \(maximumTextLength) bytes")
        }
        for (name, value) in attributes ?? [:]
        where name.utf8.count > maximumTextLength || value.utf8.count > maximumTextLength {
            throw .invalidArgs("an attribute's name and value are at most \(maximumTextLength) bytes each")
        }
    }

    /// Who the client `sender` is (asked of the bus once per client).
    func caller(_ sender: String) -> Caller {
        if let known = callers[sender] { return known }
        let caller = Caller(credentials: bus.credentials(of: sender))
        callers[sender] = caller
        return caller
    }

    /// Makes the spare DH key pair when there is none (at the start, and when a client leaves
    /// the bus: between one client and the next, not while one waits); a failure is left to
    /// the next `OpenSession`, which makes its own pair and says what failed.
    func makeSpareKeyPair() {
        guard spareKeyPair == nil else { return }
        spareKeyPair = try? Gcrypt.keyPair()
    }

    /// The spare DH key pair, which no other session gets; nil when there is none.
    func takeSpareKeyPair() -> (privateKey: SecretBytes, publicKey: SecretBytes)? {
        defer { spareKeyPair = nil }
        return spareKeyPair
    }

    /// Opens a session for `owner`; its object path.
    /// - Throws: `LimitsExceeded` when its owner has ``maximumSessionsPerClient`` open.
    func addSession(_ session: ProviderSession) throws(ProviderError) -> String {
        guard sessions.values.count(where: { $0.owner == session.owner }) < Self.maximumSessionsPerClient else {
            throw .limitsExceeded("a client has at most \(Self.maximumSessionsPerClient) open sessions")
        }
        let path = ObjectPath.session(id: "s\(nextSession)")
        nextSession += 1
        sessions[path] = session
        return path
    }

    /// The session at `path` when `sender` opened it and it is open.
    func session(_ path: String, of sender: String) throws(ProviderError) -> ProviderSession {
        guard let session = sessions[path], session.owner == sender else { throw .noSession(path) }
        return session
    }

    /// The id of the collection `path` names (by id or by alias), nil when there is none.
    func collectionID(_ path: String) -> String? {
        switch ObjectPath(path) {
        case .collection(let id): store.collections[id] != nil ? id : nil
        case .alias(let alias): store.aliases[alias].flatMap { store.collections[$0] != nil ? $0 : nil }
        default: nil
        }
    }

    /// The item `path` names, nil when there is none.
    func itemRef(_ path: String) -> ItemRef? {
        guard case .item(let collection, let item) = ObjectPath(path) else { return nil }
        let ref = ItemRef(collection: collection, item: item)
        return store.info(ref) != nil ? ref : nil
    }

    /// Emits `PropertiesChanged` for `interface` of `path`: the new values of `names`, except a
    /// collection's `Items`, which is only named as invalidated (its value, every item's path,
    /// would make each write cost as much as the collection is large).
    func propertiesChanged(_ path: String, _ interface: String, _ names: [String]) {
        let changed = names.filter { $0 != "Items" }.compactMap { name -> DBusValue? in
            guard case .success(let value) = property(path, interface, name) else { return nil }
            return .dictEntry(.string(name), .variant(value))
        }
        let invalidated = names.filter { $0 == "Items" }.map(DBusValue.string)
        bus.emit(
            path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
            [.string(interface), .array("{sv}", changed), .array("s", invalidated)])
    }
}

extension SecretServiceProvider: SubtreeHandler {
    func call(_ call: MethodCall) -> Result<[DBusValue], ProviderError>? {
        let result = dispatch(call)
        if Self.keyCalls.contains(call.method) { release(call.sender) }
        return result
    }

    func answered() {
        for failure in store.settleAudit() {
            log("secret service: an audit entry of \(failure.path) is not yet durable: \(failure.error.message)")
        }
    }

    private func dispatch(_ call: MethodCall) -> Result<[DBusValue], ProviderError>? {
        do throws(ProviderError) {
            switch (ObjectPath(call.path), call.interface) {
            case (.service, "org.freedesktop.Secret.Service"): return .success(try serviceCall(call))
            case (.service, "io.github.latchkey.SecretService") where call.method == "Unlock":
                return try startUnlock(call)
            case (.service, "io.github.latchkey.SecretService"): return .success(try latchkeyCall(call))
            case (.prompt, "org.freedesktop.Secret.Prompt"): return .success(try promptCall(call))
            case (.collection, "org.freedesktop.Secret.Collection"), (.alias, "org.freedesktop.Secret.Collection"):
                guard let id = collectionID(call.path) else { throw .noSuchObject(call.path) }
                if isLockedPath(call.path) && call.method != "SearchItems" { throw .isLocked(call.path) }
                return .success(try collectionCall(call, id))
            case (.item, "org.freedesktop.Secret.Item"):
                if isLockedPath(call.path) { throw .isLocked(call.path) }
                guard let ref = itemRef(call.path) else { throw .noSuchObject(call.path) }
                return .success(try itemCall(call, ref))
            case (.session, "org.freedesktop.Secret.Session") where call.method == "Close":
                _ = try session(call.path, of: call.sender)
                sessions[call.path] = nil
                return .success([])
            case (.session, _): throw .noSession(call.path)
            default: throw .noSuchObject(call.path)
            }
        } catch {
            return .failure(error)
        }
    }

    func property(_ path: String, _ interface: String, _ name: String) -> Result<DBusValue, ProviderError> {
        switch (ObjectPath(path), interface, name) {
        case (.service, "org.freedesktop.Secret.Service", "Collections"):
            return .success(.paths(store.collections.keys.sorted().map { ObjectPath.collection(id: $0) }))
        case (.collection, "org.freedesktop.Secret.Collection", _), (.alias, "org.freedesktop.Secret.Collection", _):
            guard let id = collectionID(path), let collection = store.collections[id] else {
                return .failure(.noSuchObject(path))
            }
            switch name {
            case "Items":
                return .success(
                    .paths(collection.items.keys.sorted().map { ObjectPath.item(ItemRef(collection: id, item: $0)) }))
            case "Label": return .success(.string(collection.label))
            case "Locked": return .success(.boolean(isLockedPath(path)))
            case "Created": return .success(.uint64(collection.created))
            case "Modified": return .success(.uint64(collection.modified))
            default: return .failure(.unknownMethod("no property \(name)"))
            }
        case (.item, "org.freedesktop.Secret.Item", _):
            guard let ref = itemRef(path), let info = store.info(ref) else {
                return .failure(isLockedPath(path) ? .isLocked(path) : .noSuchObject(path))
            }
            switch name {
            case "Attributes": return .success(.strings(info.attributes))
            case "Label": return .success(.string(info.label))
            case "Locked": return .success(.boolean(isLockedPath(path)))
            case "Created": return .success(.uint64(info.created))
            case "Modified": return .success(.uint64(info.modified))
            default: return .failure(.unknownMethod("no property \(name)"))
            }
        default:
            return .failure(.noSuchObject(path))
        }
    }

    func setProperty(_ sender: String, _ path: String, _ interface: String, _ name: String, _ value: DBusValue?)
        -> Result<
            Void, ProviderError
        >
    {
        do {
            if isLockedPath(path) { return .failure(.isLocked(path)) }
            switch (interface, name, value?.unboxed) {
            case ("org.freedesktop.Secret.Collection", "Label", .string(let label)):
                try Self.checkSizes(label: label, attributes: nil)
                guard let id = collectionID(path) else { return .failure(.noSuchObject(path)) }
                try store.setLabel(label, ofCollection: id, for: caller(sender))
                propertiesChanged(path, interface, ["Label", "Modified"])
                bus.emit(ObjectPath.base, "org.freedesktop.Secret.Service", "CollectionChanged", [.objectPath(path)])
            case ("org.freedesktop.Secret.Item", "Label", .string(let label)):
                try Self.checkSizes(label: label, attributes: nil)
                guard let ref = itemRef(path) else { return .failure(.noSuchObject(path)) }
                try store.update(ref, label: label, for: caller(sender))
                itemChanged(ref, properties: ["Label", "Modified"])
            case ("org.freedesktop.Secret.Item", "Attributes", let value?):
                guard let ref = itemRef(path) else { return .failure(.noSuchObject(path)) }
                guard let attributes = value.stringDictionary else {
                    return .failure(.invalidArgs("Attributes is a dictionary of strings"))
                }
                try Self.checkSizes(label: nil, attributes: attributes)
                try store.update(ref, attributes: attributes, for: caller(sender))
                itemChanged(ref, properties: ["Attributes", "Modified"])
            default:
                return .failure(.invalidArgs("\(interface).\(name) cannot be set to that"))
            }
            return .success(())
        } catch let error as ProviderError {
            return .failure(error)
        } catch {
            return .failure(.failed(error.message))
        }
    }

    func interfaces(_ path: String) -> Interfaces {
        switch ObjectPath(path) {
        case .service: [.service, .latchkey]
        case .collection, .alias: .collection
        case .item: .item
        case .session: .session
        case .prompt: prompts[path] != nil ? .prompt : []
        case .none: []
        }
    }

    func children(_ path: String) -> [String] {
        switch path {
        case ObjectPath.base: ["collection", "aliases", "session", "prompt"]
        case ObjectPath.base + "/prompt": prompts.keys.compactMap { $0.split(separator: "/").last.map(String.init) }
        case ObjectPath.base + "/collection": store.collections.keys.sorted()
        case ObjectPath.base + "/aliases": store.aliases.keys.sorted()
        case ObjectPath.base + "/session": sessions.keys.compactMap { $0.split(separator: "/").last.map(String.init) }
        default:
            if case .collection(let id) = ObjectPath(path) {
                store.collections[id].map { $0.items.keys.sorted() } ?? []
            } else {
                []
            }
        }
    }

    /// Says that an item changed: `ItemChanged` on its collection and `PropertiesChanged` on it.
    func itemChanged(_ ref: ItemRef, properties: [String]) {
        let path = ObjectPath.item(ref)
        bus.emit(
            ObjectPath.collection(id: ref.collection), "org.freedesktop.Secret.Collection", "ItemChanged",
            [.objectPath(path)])
        propertiesChanged(path, "org.freedesktop.Secret.Item", properties)
    }
}

/// The running provider, handed to ``SecretServiceProvider/lockRunning()``'s closure: other
/// threads only ask its bus connection to schedule a call (a GLib source attached to its main
/// context, which GLib allows from any thread); the provider itself is used on its thread only.
struct ProviderHandle: @unchecked Sendable {
    let provider: SecretServiceProvider
}
