import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One item of a collection, by the collection's id and its own.
struct ItemRef: Hashable {
    let collection: String
    let item: String
}

/// A collection: its label and times, and its items' infos (their secrets stay in the vault).
struct StoredCollection {
    let id: String
    var label: String
    let created: UInt64
    var modified: UInt64
    /// False for the `session` collection, which is kept in memory only.
    let persistent: Bool
    var items: [String: ItemInfo] = [:]
    var nextItem = 1
}

/// The provider's items and collections: the collections and aliases one named secret
/// `collections` (``CollectionsRecord``) of an encrypted file vault of the provider's own
/// namespace, the items of persistent collections records (``ItemRecord``) of the
/// ``ItemJournal`` beside it, whose key is the vault's named secret `journal-key`; the
/// `session` collection in memory only. Attributes and labels are held in memory too, with an
/// index on attributes for searches, and where each item's record is, so that a read decrypts
/// one record. Every change is durable (the journal's append and `fsync`, or the vault's own
/// atomic, durable write) and audited before it is answered.
/// Used on the provider's thread only.
final class ProviderStore {
    /// The namespace of the provider's vault.
    static let appID = "io.github.latchkey.secret-service"
    /// The id of the in-memory collection (and its alias).
    static let sessionCollection = "session"

    /// The open vault and its items' journal; nil while a passphrase vault is locked.
    private var openVault: Vault?
    private var journal: ItemJournal?
    /// Where the last record of each item of a persistent collection is in the journal.
    private var locations: [ItemRef: ItemJournal.Location] = [:]
    /// How many stale records the journal holds at least before it is compacted (and at least
    /// as many as live ones): each compaction rewrites the live records once.
    private let compactionMinimum: Int
    /// The vault's namespace, store directory and policy, to open it.
    private let storeDirectory: String
    private let policy: Policy
    private(set) var collections: [String: StoredCollection] = [:]
    private(set) var aliases: [String: String] = [:]
    /// Items by `name NUL value` of each attribute.
    private var index: [String: Set<ItemRef>] = [:]
    /// The secrets of the `session` collection's items.
    private var memorySecrets: [ItemRef: SecretBytes] = [:]

    /// Opens the vault in `storeDirectory` (the file backend) and reads every item's label and
    /// attributes from the journal, as one operation audited by one `secret.read` entry (the
    /// provider's own load, no client's read); a passphrase vault (`passphrase` true) starts
    /// locked instead, until ``unlock(_:)``.
    /// - Parameters:
    ///   - auditFailureMode: The user's policy's `audit.onFailure`.
    ///   - passphrase: Whether the vault's key comes from a passphrase (the user's policy's
    ///     `file.keySource`), else from its key file.
    ///   - compactionMinimum: How many stale records the journal holds at least before it is compacted.
    /// - Throws: `LatchkeyError` from opening or reading the vault.
    init(
        storeDirectory: String, auditFailureMode: Policy.AuditFailureMode = .fail, passphrase: Bool = false,
        compactionMinimum: Int = 256
    ) throws {
        self.compactionMinimum = compactionMinimum
        let json = Self.policyJSON(
            auditFailure: auditFailureMode.rawValue, keySource: passphrase ? "passphrase" : "keyfile")
        policy = try Policy(jsonData: Array(json.utf8), source: "the Secret Service provider's policy")
        self.storeDirectory = storeDirectory
        let now = Self.now()
        collections[Self.sessionCollection] = StoredCollection(
            id: Self.sessionCollection, label: "Session", created: now, modified: now, persistent: false)
        aliases[Self.sessionCollection] = Self.sessionCollection
        if passphrase {
            showLocked()
        } else {
            try load(Opening(appID: Self.appID, storeDirectory: storeDirectory, policy: policy, passphrase: nil).open())
        }
    }

    /// Whether the vault can be locked: a passphrase vault (a key-file vault is unlocked from the start).
    var canLock: Bool { policy.fileKeySource == .passphrase }

    /// Whether the vault is locked (a passphrase vault whose key the provider does not hold).
    var isLocked: Bool { openVault == nil }

    /// What opens the vault with `passphrase`, on any thread (``Opening/open()`` runs the key
    /// derivation): the provider's thread keeps answering meanwhile, then hands the open vault
    /// to ``unlock(_:)``.
    func opening(passphrase: SecretBytes) -> Opening {
        Opening(appID: Self.appID, storeDirectory: storeDirectory, policy: policy, passphrase: passphrase)
    }

    /// Opens the vault, with its passphrase or its key file, and reads its named secrets (the
    /// collections and the journal's key) as one audited operation; used on any thread.
    struct Opening: Sendable {
        let appID: String
        let storeDirectory: String
        let policy: Policy
        let passphrase: SecretBytes?

        /// - Throws: `LatchkeyError` `.wrongKey` for a wrong passphrase (audited by the vault as
        ///   `unlock.failed`); the vault's other errors.
        func open() throws -> Opened {
            let vault = try Vault.open(
                appID: AppID(appID), policy: policy, storeDirectory: storeDirectory, backend: .file,
                passphrase: passphrase)
            var records: [String: SecretBytes] = [:]
            for stored in try vault.allSecrets(
                auditDetail: "the Secret Service provider loaded its collections and items")
            {
                records[stored.name] = stored.value
            }
            return Opened(vault: vault, records: records)
        }
    }

    /// An open vault and its named secrets.
    struct Opened: Sendable {
        let vault: Vault
        let records: [String: SecretBytes]
    }

    /// Takes the vault ``Opening/open()`` opened for a locked passphrase vault and reads its
    /// items from the journal.
    /// - Throws: `LatchkeyError` when the journal cannot be read; it stays locked then.
    func unlock(_ opened: Opened) throws {
        guard isLocked else { return }
        try load(opened)
    }

    /// Makes the audit entries of the calls answered so far durable (the vault defers them,
    /// ``Latchkey/Vault/AuditDurability/deferred``): called once each answer is sent, so no
    /// client waits for the trail's `fsync`; an item's own change is durable before its answer.
    /// - Returns: What failed, by trail, for the agent's log.
    func settleAudit() -> [AuditSyncFailure] {
        openVault?.settleAudit() ?? []
    }

    /// Forgets the vault's key. The labels and attributes read at the unlock stay in memory
    /// (the spec lets a provider keep them in the clear), so that a client's search finds its
    /// items locked and can ask to unlock them; every secret is read from the journal, which
    /// cannot be read without its key, kept in the vault. A key-file vault is never locked.
    /// - Returns: What failed as the audit entries deferred so far were made durable first.
    @discardableResult
    func lock() -> [AuditSyncFailure] {
        guard policy.fileKeySource == .passphrase else { return [] }
        let failures = settleAudit()
        openVault = nil
        journal = nil
        return failures
    }

    /// What a vault locked since the start shows (nothing of it has been read): its default
    /// collection `login`, locked and with no items.
    private func showLocked() {
        let now = Self.now()
        collections = collections.filter { !$0.value.persistent }
        aliases = aliases.filter { collections[$0.value] != nil }
        index = [:]
        locations = [:]
        for (ref, _) in memorySecrets {
            collections[ref.collection]?.items[ref.item].map { addToIndex(ref, $0.attributes) }
        }
        collections["login"] = StoredCollection(
            id: "login", label: "Login", created: now, modified: now, persistent: true)
        aliases["default"] = "login"
    }

    /// The open vault.
    /// - Throws: `LatchkeyError` `.locked` while it is locked.
    private var vault: Vault {
        get throws {
            guard let openVault else { throw LatchkeyError(.locked, "the Secret Service provider's vault is locked") }
            return openVault
        }
    }

    /// Takes the open vault's collections and the journal's key (made when there is none),
    /// then reads the journal's items into memory.
    private func load(_ opened: Opened) throws {
        let (vault, records) = (opened.vault, opened.records)
        let appID = try AppID(Self.appID)
        var loaded: [String: StoredCollection]
        var loadedAliases: [String: String]
        if let record = records["collections"] {
            (loaded, loadedAliases) = try CollectionsRecord.decode(record)
        } else {
            let now = Self.now()
            loaded = [
                "login": StoredCollection(id: "login", label: "Login", created: now, modified: now, persistent: true)
            ]
            loadedAliases = ["default": "login"]
            try vault.saveSecret(
                CollectionsRecord.encode(Array(loaded.values), aliases: loadedAliases), named: "collections",
                auditDetail: "the Secret Service provider created its collection login")
        }
        let key: SecretBytes
        if let kept = records["journal-key"], kept.count == ItemJournal.keyLength {
            key = kept
        } else {
            key = SecretBytes.random(count: ItemJournal.keyLength)
            try vault.saveSecret(
                key, named: "journal-key", auditDetail: "the Secret Service provider made the key of its journal")
        }
        var found: [ItemRef: (info: ItemInfo, location: ItemJournal.Location)] = [:]
        let path = NamespaceDirectory(appID: appID, storeDirectory: storeDirectory).path + "/" + ItemJournal.fileName
        let journal = try ItemJournal(path: path, key: key) { change, location in
            switch change {
            case .put(let ref, let record): found[ref] = (try ItemRecord.decode(record).info, location)
            case .delete(let ref): found[ref] = nil
            }
        }
        var loadedLocations: [ItemRef: ItemJournal.Location] = [:]
        for (ref, item) in found where loaded[ref.collection] != nil {
            loaded[ref.collection]?.items[ref.item] = item.info
            loadedLocations[ref] = item.location
            if let number = Int(ref.item), number >= loaded[ref.collection]!.nextItem {
                loaded[ref.collection]!.nextItem = number + 1
            }
        }
        collections = collections.filter { !$0.value.persistent }.merging(loaded) { kept, _ in kept }
        aliases = aliases.filter { collections[$0.value]?.persistent == false }.merging(loadedAliases) { $1 }
        index = [:]
        for collection in collections.values {
            for (item, info) in collection.items {
                addToIndex(ItemRef(collection: collection.id, item: item), info.attributes)
            }
        }
        locations = loadedLocations
        // A client waits for its answer, not for the trail's fsync: ``settleAudit()`` once it is sent.
        vault.auditDurability = .deferred
        openVault = vault
        self.journal = journal
        try compactIfStale()
    }

    /// The provider's policy: the encrypted file with a key file or a passphrase (`keySource`,
    /// the user's `file.keySource`), audited with the user's `audit.onFailure` (`auditFailure`); never the Secret Service (which would be the
    /// provider itself) and no migration to it.
    private static func policyJSON(auditFailure: String, keySource: String) -> String {
        """
        {"version": 1, "name": "secret-service-provider",
         "backend": {"kind": "file", "allowFileFallback": true, "migrateToSecretService": false},
         "file": {"keySource": "\(keySource)"},
         "secrets": {"maxAgeSeconds": null, "onLogout": "keep"},
         "audit": {"enabled": true, "onFailure": "\(auditFailure)"}}
        """
    }

    /// Seconds since 1970, now.
    static func now() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970)) }

    /// The items whose attributes include every one of `attributes` (every item for none).
    func search(_ attributes: [String: String]) -> [ItemRef] {
        guard !attributes.isEmpty else {
            return collections.values.flatMap { collection in
                collection.items.keys.map { ItemRef(collection: collection.id, item: $0) }
            }
        }
        let sets = attributes.map { index[Self.indexKey($0.key, $0.value)] ?? [] }.sorted { $0.count < $1.count }
        var result = sets[0]
        for set in sets.dropFirst() { result.formIntersection(set) }
        return Array(result)
    }

    /// The info of an item, nil when there is none.
    func info(_ ref: ItemRef) -> ItemInfo? { collections[ref.collection]?.items[ref.item] }

    /// An item's secret, read for `caller` (audited), nil when there is no such item.
    /// - Throws: `LatchkeyError` when the vault cannot be read or the read cannot be audited.
    func secret(_ ref: ItemRef, for caller: Caller) throws -> SecretBytes? {
        guard let collection = collections[ref.collection], collection.items[ref.item] != nil else { return nil }
        let detail = caller.detail("read", ObjectPath.item(ref))
        guard collection.persistent else {
            try vault.recordOutsideVault(.secretRead, auditDetail: detail)
            return memorySecrets[ref]
        }
        let journal = try openJournal
        guard let location = locations[ref] else { return nil }
        try vault.recordOutsideVault(.secretRead, auditDetail: detail)
        return try ItemRecord.decode(journal.record(at: location, of: ref)).secret
    }

    /// Creates an item in `collection`, or with `replace` replaces the secret, label and content
    /// type of the one there with the same attributes.
    /// - Returns: The item and whether it is new.
    /// - Throws: `LatchkeyError` when the vault cannot be written or the write cannot be audited (nothing changed then).
    func createItem(
        in collection: String, label: String, attributes: [String: String], secret: SecretBytes, contentType: String,
        replace: Bool, for caller: Caller
    ) throws -> (ref: ItemRef, created: Bool) {
        let now = Self.now()
        let same =
            replace
            ? search(attributes).filter { $0.collection == collection && self.info($0)?.attributes == attributes } : []
        if let ref = same.min(by: { $0.item < $1.item }), var info = self.info(ref) {
            info.label = label
            info.contentType = contentType
            info.modified = now
            try write(ref, info, secret, for: caller)
            return (ref, false)
        }
        let number = collections[collection]!.nextItem
        let ref = ItemRef(collection: collection, item: String(number))
        let info = ItemInfo(label: label, attributes: attributes, contentType: contentType, created: now, modified: now)
        try write(ref, info, secret, for: caller)
        collections[collection]!.nextItem = number + 1
        return (ref, true)
    }

    /// Changes an item's secret (and content type), label or attributes: nil keeps what there is.
    /// The item's record is rewritten: one write audited for `caller` (the secret it keeps is not a client's read).
    /// - Throws: `LatchkeyError` when the vault cannot be read or written (nothing changed then).
    func update(
        _ ref: ItemRef, secret newSecret: SecretBytes? = nil, contentType: String? = nil, label: String? = nil,
        attributes: [String: String]? = nil, for caller: Caller
    ) throws {
        guard var info = info(ref), let collection = collections[ref.collection] else { return }
        info.contentType = contentType ?? info.contentType
        info.label = label ?? info.label
        info.attributes = attributes ?? info.attributes
        info.modified = Self.now()
        if let newSecret { return try write(ref, info, newSecret, for: caller) }
        let detail = caller.detail("write", ObjectPath.item(ref))
        if collection.persistent {
            let journal = try openJournal
            guard let location = locations[ref] else { return }
            let secret = try ItemRecord.decode(journal.record(at: location, of: ref)).secret
            try journaled(.put(ref, ItemRecord.encode(info, secret: secret)), .secretSaved, detail)
        } else {
            try vault.recordOutsideVault(.secretSaved, auditDetail: detail)
        }
        apply(ref, info)
    }

    /// Deletes an item for `caller` (audited); one that is not there is left alone.
    /// - Throws: `LatchkeyError` when the vault cannot be written or the deletion cannot be audited (nothing changed then).
    func delete(_ ref: ItemRef, for caller: Caller) throws {
        guard let collection = collections[ref.collection], let info = collection.items[ref.item] else { return }
        let detail = caller.detail("delete", ObjectPath.item(ref))
        if collection.persistent {
            try journaled(.delete(ref), .secretDeleted, detail)
        } else {
            try vault.recordOutsideVault(.secretDeleted, auditDetail: detail)
        }
        memorySecrets[ref] = nil
        removeFromIndex(ref, info.attributes)
        collections[ref.collection]?.items[ref.item] = nil
        collections[ref.collection]?.modified = Self.now()
    }

    /// Creates a collection labelled `label`, with `alias` pointing to it when not empty.
    /// - Returns: Its id.
    func createCollection(label: String, alias: String, for caller: Caller) throws -> String {
        let base = String(label.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }.prefix(64))
        var id = base.isEmpty ? "collection" : base
        var suffix = 1
        while collections[id] != nil || id == Self.sessionCollection {
            suffix += 1
            id = (base.isEmpty ? "collection" : base) + String(suffix)
        }
        let now = Self.now()
        let previous = (collections, aliases)
        collections[id] = StoredCollection(id: id, label: label, created: now, modified: now, persistent: true)
        if !alias.isEmpty { aliases[alias] = id }
        do { try saveCollections(detail: caller.detail("create", ObjectPath.collection(id: id))) } catch {
            (collections, aliases) = previous
            throw error
        }
        return id
    }

    /// Deletes a collection and its items (the items first: a crash between leaves an empty collection).
    func deleteCollection(_ id: String, for caller: Caller) throws {
        guard let collection = collections[id] else { return }
        for item in collection.items.keys { try delete(ItemRef(collection: id, item: item), for: caller) }
        guard collection.persistent else { return }
        let previous = (collections, aliases)
        collections[id] = nil
        aliases = aliases.filter { $0.value != id }
        do { try saveCollections(detail: caller.detail("delete", ObjectPath.collection(id: id))) } catch {
            (collections, aliases) = previous
            throw error
        }
    }

    /// Points `alias` at a collection, or removes it for nil.
    func setAlias(_ alias: String, to id: String?, for caller: Caller) throws {
        let previous = aliases
        aliases[alias] = id
        do { try saveCollections(detail: caller.detail("write", ObjectPath.base + "/aliases/" + alias)) } catch {
            aliases = previous
            throw error
        }
    }

    /// Changes a collection's label.
    func setLabel(_ label: String, ofCollection id: String, for caller: Caller) throws {
        guard collections[id] != nil else { return }
        let previous = collections
        collections[id]!.label = label
        collections[id]!.modified = Self.now()
        guard collections[id]!.persistent else { return }
        do { try saveCollections(detail: caller.detail("write", ObjectPath.collection(id: id))) } catch {
            collections = previous
            throw error
        }
    }

    /// Writes an item for `caller` (to the vault, or to memory for the `session` collection,
    /// audited either way) and updates the index.
    private func write(_ ref: ItemRef, _ info: ItemInfo, _ secret: SecretBytes, for caller: Caller) throws {
        let detail = caller.detail("write", ObjectPath.item(ref))
        if collections[ref.collection]!.persistent {
            try journaled(.put(ref, ItemRecord.encode(info, secret: secret)), .secretSaved, detail)
        } else {
            try vault.recordOutsideVault(.secretSaved, auditDetail: detail)
            memorySecrets[ref] = secret
        }
        apply(ref, info)
    }

    /// Keeps an item's new info in memory: its collection and the index.
    private func apply(_ ref: ItemRef, _ info: ItemInfo) {
        if let old = collections[ref.collection]!.items[ref.item] { removeFromIndex(ref, old.attributes) }
        collections[ref.collection]!.items[ref.item] = info
        collections[ref.collection]!.modified = info.modified
        addToIndex(ref, info.attributes)
    }

    /// The open journal.
    /// - Throws: `LatchkeyError` `.locked` while the vault is locked.
    private var openJournal: ItemJournal {
        get throws {
            guard let journal else { throw LatchkeyError(.locked, "the Secret Service provider's vault is locked") }
            return journal
        }
    }

    /// Appends `change` to the journal (durable when it returns), then records `event` with
    /// `detail` in the vault's trail; when that entry cannot be written under `audit.onFailure`
    /// `fail`, the record is taken back and nothing changed. The item's new location is kept (none
    /// after a deletion) before the journal is compacted, when most of its records are stale.
    private func journaled(_ change: ItemJournal.Change, _ event: AuditEvent, _ detail: String) throws {
        let journal = try openJournal
        let vault = try vault
        let location = try journal.append(change)
        do {
            try vault.recordOutsideVault(event, auditDetail: detail)
        } catch {
            try journal.removeLast(location)
            throw error
        }
        switch change {
        case .put(let ref, _): locations[ref] = location
        case .delete(let ref): locations[ref] = nil
        }
        do { try compactIfStale() } catch {
            // The change is made and durable; the journal stays as it is, to be compacted later.
        }
    }

    /// Compacts the journal when it holds at least ``compactionMinimum`` stale records and at
    /// least as many as live ones.
    private func compactIfStale() throws {
        guard let journal else { return }
        let stale = Int(journal.count) - locations.count
        guard stale >= max(compactionMinimum, locations.count) else { return }
        locations = try journal.compact(locations.map { ($0.key, $0.value) })
    }

    private func saveCollections(detail: String) throws {
        let persistent = collections.values.filter(\.persistent)
        let kept = aliases.filter { collections[$0.value]?.persistent == true }
        try vault.saveSecret(
            CollectionsRecord.encode(persistent, aliases: kept), named: "collections", auditDetail: detail)
    }

    private func addToIndex(_ ref: ItemRef, _ attributes: [String: String]) {
        for (name, value) in attributes { index[Self.indexKey(name, value), default: []].insert(ref) }
    }

    private func removeFromIndex(_ ref: ItemRef, _ attributes: [String: String]) {
        for (name, value) in attributes { index[Self.indexKey(name, value)]?.remove(ref) }
    }

    private static func indexKey(_ name: String, _ value: String) -> String { name + "\u{0}" + value }
}
