import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `CredentialBackend` that keeps one app's items in the Secret Service
/// (gnome-keyring, KeePassXC, KWallet's bridge) through libsecret.
///
/// Items use the schema `io.github.latchkey.Item`; their attributes hold only the
/// app id, the kind, a keyed pseudonym of the account and the item name, and their
/// labels only the kind and app id. The account, name, value and times travel in
/// the secret itself (see `docs/SECRET-SERVICE.md`).
///
/// Every call ends within ``deadline``: a hung daemon gives `.timedOut` (and,
/// for one deadline after that, so does every further call, at once), a locked
/// collection `.locked` (Latchkey never asks for an unlock prompt), and a missing
/// session bus or Secret Service `.unavailable`, found in well under a second.
/// Calls from many tasks are safe; libsecret is called one call at a time.
package final class SecretServiceBackend: CredentialBackend {
    /// The app namespace this backend serves.
    package let appID: AppID
    /// The longest any call may take, waiting for other calls included.
    package let deadline: Duration
    private let environment: [String: String]
    /// Whether ``environment`` is the process's own (not a test's), so the
    /// availability check shares libsecret's bus connection.
    private let isProcessEnvironment: Bool
    /// Whether the availability check passed since the last failure that may mean
    /// the service went away.
    private let reachable = Mutex(false)
    /// The process id of the Secret Service's owner as the last availability check that asked
    /// the bus found it (nil when the name was only activatable, or before any check).
    private let owner = Mutex<UInt32?>(nil)
    /// Until when calls fail at once with `.timedOut`, after one was not answered
    /// within the deadline: a hung daemon costs a command one deadline, not one
    /// per call (the failed call's audit entry would otherwise wait once more).
    private let silentUntil = Mutex<ContinuousClock.Instant?>(nil)
    /// The app's key items as last found, all in one search: the pseudonym key
    /// and the keys Latchkey keeps as items of kind `key` (the audit trail's).
    /// So a process's first read costs two searches (the keys, then the item)
    /// and later reads one. A read or delete that finds nothing looks the keys
    /// up again before it answers, in case another process replaced the namespace.
    private let knownKeys = Mutex<KeyItems?>(nil)
    /// Whether ``knownKeys`` may be used without asking the service: true once they
    /// were read, or confirmed, in the current command. A kept backend
    /// (``beginCommand()``) confirms them at its first call of each command.
    private let keysConfirmed = Mutex(false)
    /// Where the items last read were found (their D-Bus paths), when the search
    /// found exactly one: a later read of the same address asks for that item's
    /// secret directly, with no search, and searches again when the item is gone,
    /// locked, or no longer holds that address. What a long-lived process (the
    /// agent, an app that keeps its vault open) gains; a writer or deleter of the address forgets it.
    private let knownPaths = Mutex<[ItemKey: KnownPath]>([:])

    /// Where an item was found, and the watch's generation it was learnt under (nil when
    /// not followed): only a path learnt under the current generation is read without a
    /// search by a command that relies on the watch (``watchedRead(_:_:)``).
    private struct KnownPath {
        var path: String
        var learnt: UInt64?
    }
    /// What a kept backend learnt while it followed the bus, and under which generation
    /// of the watch (``LibSecret/watchGeneration``): see ``Watched``.
    private let watched = Mutex(Watched())

    /// A kept backend follows the bus from its second command on (``beginCommand()``):
    /// a process that opens a store once pays for no subscription. Each fact holds the
    /// watch's generation it was learnt under, sampled before the calls that learnt it
    /// and found again after their replies; it is used without asking only while the
    /// generation has not moved (no watched signal since). A command that used one confirms
    /// them with its calls (``checkDefaultCollection()``'s `ReadAlias`, ``watchedRead(_:_:)``),
    /// whose results are discarded for the full path, as a new process takes it, when the
    /// generation moved before their replies. Only where things are is kept: secrets are read
    /// from the service in every command.
    private struct Watched {
        /// Whether the backend follows the bus (a kept backend, from its second command).
        var isOn = false
        /// When the service was last found reachable (``checkAvailability()``).
        var available: UInt64?
        /// When ``knownKeys`` and their paths were last read.
        var keys: UInt64?
        /// The generation this command relied on without asking, or nil when it asked everything.
        var trusted: UInt64?
        /// Whether this command was given a key item as learnt, before any call confirmed it.
        var servedKeys = false
    }

    /// The full path is to be taken: what was learnt may be out of date.
    private struct FullPath: Error {}

    /// The app's key items, found together.
    private struct KeyItems {
        /// The pseudonym key, or nil when the app has none yet.
        var pseudonyms: SecretServicePseudonymKey?
        /// Every other item of kind `key`, by address.
        var others: [ItemKey: StoredItem]
        /// The D-Bus paths of every key item the search found, or nil when not known.
        var paths: Set<String>? = nil
    }

    /// Creates a backend for one app namespace. Nothing is contacted until the first call.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - deadline: The longest any call may take; 3 seconds by default.
    package convenience init(appID: AppID, deadline: Duration = .seconds(3)) {
        self.init(
            appID: appID, deadline: deadline, environment: Self.busEnvironment(), isProcessEnvironment: true)
    }

    /// The process's variables that locate the session bus, read one at a time
    /// rather than decoding the whole environment.
    private static func busEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in SecretServiceAvailability.busVariables { environment[name] = POSIX.environmentValue(name) }
        return environment
    }

    /// Creates a backend whose availability check reads `environment` (a test seam).
    /// libsecret itself always uses the process's session bus.
    init(appID: AppID, deadline: Duration, environment: [String: String], isProcessEnvironment: Bool = false) {
        precondition(deadline > .zero, "the deadline must be positive")
        self.appID = appID
        self.deadline = deadline
        self.environment = environment
        self.isProcessEnvironment = isProcessEnvironment
    }

    /// Always `.secretService`.
    package var kind: BackendKind { .secretService }

    /// Sets what this process does when a libsecret call has not returned 2 s after
    /// its deadline cancelled it (libsecret waiting on a reply its cancellation does
    /// not stop): `handler` runs on another thread while the call still waits. The
    /// command line and the agent end the process; without a handler the calling
    /// thread keeps waiting.
    package static func whenACallNeverReturns(_ handler: @escaping @Sendable () -> Void) {
        LibSecret.neverReturningCall.withLock { $0 = handler }
    }

    /// The program that provides the Secret Service on the process's session bus,
    /// such as `gnome-keyring-d (pid 812)` (its `/proc/<pid>/comm`, which the kernel
    /// cuts at 15 bytes), or nil when nobody owns `org.freedesktop.secrets` or the bus does not say.
    /// - Parameter timeout: How long asking the bus may take: what is left of the caller's
    ///   deadline, never a fixed time of its own (a hung bus would add it to every command).
    package static func provider(timeout: Duration) -> String? {
        guard SecretServiceAvailability.sessionBusAddress(in: busEnvironment()) != nil,
            let pid = LibSecret.ownerProcessID(of: SecretServiceAvailability.busName, timeout: timeout)
        else { return nil }
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.split(separator: "\n").first
        return "\(comm.map(String.init) ?? "a program") (pid \(pid))"
    }

    /// Checks that a Secret Service can be reached on the session bus.
    /// - Throws: `LatchkeyError` `.unavailable` (no session bus, or nothing owns or
    ///   can activate `org.freedesktop.secrets`) or `.timedOut`.
    package func checkAvailability() throws {
        if usesWatched(\.available) {
            reachable.withLock { $0 = true }
            return
        }
        let before = LibSecret.watchGeneration
        let found = try whileAnswering {
            try SecretServiceAvailability.check(
                environment: environment, isProcessEnvironment: isProcessEnvironment, timeout: deadline)
        }
        owner.withLock { $0 = found }
        reachable.withLock { $0 = true }
        learnt(\.available, before)
    }

    /// Whether the Secret Service's owner, as ``checkAvailability()`` found it, is Latchkey's own
    /// provider (its executable is `latchkey`: ``SecretServiceProviderFound/kind(ofExecutable:)``);
    /// no call of its own, only `/proc/PID/exe`.
    package var isLatchkeysOwnProvider: Bool {
        guard let pid = owner.withLock({ $0 }),
            let executable = SecretServiceProviderFound.executable(ofProcess: pid)
        else { return false }
        return SecretServiceProviderFound.kind(ofExecutable: executable) == .latchkey
    }

    /// Whether the namespace has any item in the Secret Service (its pseudonym key included),
    /// read without their secrets.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked`, `.timedOut`.
    package func holdsItems() throws -> Bool {
        try run { connection in
            try !connection.latchkeyItems(SecretServiceAttributes.matching(appID), loadSecrets: false).isEmpty
        }
    }

    /// Checks that the Secret Service has a default collection (where items are
    /// stored): one that has none (KWallet with no wallet, gnome-keyring with no
    /// keyring) is unavailable unless the provider may be asked to create one
    /// (``unlockDefaultCollection(timeout:)`` under `secretService.unlock` `prompt`).
    /// - Throws: `LatchkeyError` `.unavailable` naming the provider when there is
    ///   none; what a call of this backend throws otherwise.
    package func checkDefaultCollection() throws {
        // Always asked (`ReadAlias`), also by a backend that follows the bus: a hung service
        // then fails a command here, where and as it fails a new process. Its reply confirms
        // what the command relied on without asking, or drops it when a signal came first.
        let found: Bool
        do {
            found = try run { connection in
                let before = LibSecret.watchGeneration
                let found = try connection.hasDefaultCollection()
                if let trusted = watched.withLock({ $0.trusted }),
                    before != trusted || LibSecret.watchGeneration != trusted
                {
                    forgetWatched()
                }
                return found
            }
        } catch let error as LatchkeyError where error.code == .unavailable && watched.withLock({ $0.trusted }) != nil {
            // The availability check was skipped: made now, so a service gone since is reported as a new process reports it.
            forgetWatched()
            try checkAvailability()
            throw error
        }
        guard !found else { return }
        throw noDefaultCollection()
    }

    /// The error of a Secret Service with no default collection, naming the provider.
    private func noDefaultCollection() -> LatchkeyError {
        let provider = Self.provider(timeout: deadline).map { " of \($0)" } ?? ""
        return LatchkeyError(
            .unavailable,
            "the Secret Service\(provider) has no default collection (no keyring or wallet is set up); under secretService.unlock \"prompt\" it is asked to create one",
            cFunction: "secret_service_read_alias_dbus_path_sync")
    }

    /// Unlocks the default collection when it is locked, through the provider's
    /// own prompt (libsecret's unlock call), or asks the provider to create one when
    /// there is none; Latchkey draws no dialog. Which of the two is needed is asked
    /// within ``deadline``, as every call is (so a hung service fails here at the call
    /// deadline); the prompt has a deadline of its own, `timeout`, long enough for a person.
    /// - Throws: `.locked` when the prompt was dismissed or not answered within
    ///   `timeout`, saying which; what a call of this backend throws otherwise.
    package func unlockDefaultCollection(timeout: Duration) throws {
        // Whether it is missing or locked is asked like every other call, within the deadline (a hung
        // service fails here, as without a prompt); only the prompt itself waits `timeout`.
        guard let needed = try run({ try $0.defaultCollectionNeedingPrompt() }) else { return }
        do {
            try whileAnswering {
                try LibSecret.withConnection(deadline: timeout) { connection in
                    switch needed {
                    case .missing: try connection.createDefaultCollection()
                    case .locked(let path): try connection.unlockCollection(at: path)
                    }
                }
            }
        } catch let error as LatchkeyError
            where error.code == .timedOut && error.cFunction == LibSecret.Connection.unansweredPromptFunction
        {
            silentUntil.withLock { $0 = nil } // a person not answering is not a hung service
            let what =
                switch needed {
                case .locked:
                    "the Secret Service's default collection is locked and its unlock prompt got no answer within \(timeout) (the prompt stays open: answering it unlocks the keyring for the next command)"
                case .missing:
                    "the Secret Service has no default collection and the provider's prompt to create one got no answer within \(timeout) (it was not dismissed: where the provider keeps it open, as gnome-keyring does for a process still connected such as the agent, answering it creates the keyring for the next command)"
                }
            throw LatchkeyError(.locked, what, cFunction: error.cFunction)
        }
    }

    /// Runs `body` unless the service recently left a call unanswered; notes when
    /// `body` itself is left unanswered (a timeout with a C function: the daemon
    /// or bus did not reply, rather than other calls of this process queueing).
    /// - Throws: `.timedOut` at once within one deadline of an unanswered call; what `body` throws.
    private func whileAnswering<Result>(_ body: () throws -> Result) throws -> Result {
        let clock = ContinuousClock()
        if let until = silentUntil.withLock({ $0 }), clock.now < until {
            throw LatchkeyError(
                .timedOut,
                "the Secret Service left a call unanswered for the whole deadline (\(deadline)) moments ago; it is not asked again until that much time has passed"
            )
        }
        do {
            return try body()
        } catch let error as LatchkeyError where error.code == .timedOut && error.cFunction != nil {
            silentUntil.withLock { $0 = clock.now + deadline }
            throw error
        }
    }

    /// Reads one item by D-Bus path (`secret_service_search_for_dbus_paths_sync`, then `secret_service_get_secrets_for_dbus_paths_sync`; nothing unlocked).
    /// - Parameter key: The item's address.
    /// - Returns: The item, or nil when there is none.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked`, `.timedOut`, or
    ///   `.tampered` when the stored payload is malformed or belongs to another address.
    package func read(_ key: ItemKey) throws -> StoredItem? {
        guard watched.withLock({ $0.isOn }) else { return try readAsking(key) }
        if key.kind == .key, usesWatched(\.keys), let known = knownKeys.withLock({ $0?.others[key] }) {
            // The command's first read of an item reads the key items again with it and
            // checks them against what was served here (watchedRead(_:_:)).
            watched.withLock { $0.servedKeys = true }
            return known
        }
        do {
            if let found = try run({ try watchedRead(key, $0) }) { return found }
            // Not one the watch serves: asked, and still the full path when this command
            // relied on what a watched signal has since changed.
            let trusted = watched.withLock { $0.trusted }
            let found = try readAsking(key)
            guard let trusted, LibSecret.watchGeneration != trusted else { return found }
        } catch is FullPath {}
        forgetWatched()
        return try readAsking(key)
    }

    /// Reads `key` asking the service: from the known key items once confirmed in this
    /// command, at the item's known path, else by a search.
    private func readAsking(_ key: ItemKey) throws -> StoredItem? {
        // Only a key found is taken from memory: an absent one may have been created since.
        if key.kind == .key, keysConfirmed.withLock({ $0 }), let known = knownKeys.withLock({ $0?.others[key] }) {
            return known
        }
        return try run { connection in
            if key.kind == .key {
                if !keysConfirmed.withLock({ $0 }), let known = try confirmedKeys(connection)?.others[key] {
                    return known
                }
                return try loadKeys(connection).others[key]
            }
            // Following the bus, a path learnt before the last watched signal is searched for again.
            if let path = knownPaths.withLock({ $0[key] }).flatMap({ known in
                watched.withLock({ $0.isOn }) && known.learnt != LibSecret.watchGeneration ? nil : known.path
            }), let envelope = connection.envelope(atPath: path),
                envelope.account == key.account && envelope.name == key.name
            {
                return envelope.item
            }
            let before = LibSecret.watchGeneration
            let envelopes = try withKnownKey(connection) { try connection.envelopes(attributes(key, $0)) }
            guard envelopes.allSatisfy({ $0.account == key.account && $0.name == key.name }) else {
                throw LatchkeyError(.tampered, "a Secret Service item's payload belongs to another item")
            }
            let learnt = before.flatMap { LibSecret.watchGeneration == $0 ? $0 : nil }
            knownPaths.withLock {
                $0[key] = envelopes.count == 1 ? envelopes[0].path.map { KnownPath(path: $0, learnt: learnt) } : nil
            }
            return envelopes.max { $0.item.created < $1.item.created }?.item
        }
    }

    /// Stores one item, replacing any item with the same key (`secret_service_create_item_dbus_path_sync`).
    /// - Parameters:
    ///   - item: The value and its metadata.
    ///   - key: The item's address.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked` (the default collection
    ///   is locked; no unlock prompt is requested), `.timedOut`.
    package func write(_ item: StoredItem, for key: ItemKey) throws {
        knownPaths.withLock { $0[key] = nil }
        try run { connection in
            // Looked up on every write, so an item is never stored under a key another process deleted.
            let pseudonyms = try SecretServicePseudonymKey.findOrCreate(appID, in: connection)
            let envelope = SecretServiceEnvelope(account: key.account, name: key.name, item: item)
            try connection.store(
                SecretServiceAttributes.schema, attributes(key, pseudonyms),
                label: SecretServiceAttributes.label(appID, kind: key.kind),
                secret: envelope.encoded(), replace: true)
            knownKeys.withLock { keys in
                var updated = keys ?? KeyItems(pseudonyms: pseudonyms, others: [:])
                updated.pseudonyms = pseudonyms
                if key.kind == .key { updated.others[key] = item }
                keys = updated
            }
        }
    }

    /// Deletes one item; deleting an absent item succeeds (`secret_item_delete_sync`).
    /// - Parameter key: The item's address.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked`, `.timedOut`.
    package func delete(_ key: ItemKey) throws {
        knownPaths.withLock { $0[key] = nil }
        try run { connection in
            var items = try withKnownKey(connection) {
                try connection.latchkeyItems(attributes(key, $0), loadSecrets: false)
            }
            if items.isEmpty { items = try orphans(of: key, connection) }
            for item in items { try connection.delete(item) }
            if key.kind == .key { knownKeys.withLock { $0?.others[key] = nil } }
        }
    }

    /// Lists the keys of the namespace's items, with the real account names
    /// recovered from their payloads. The backend's own pseudonym key is not listed,
    /// nor is an item whose payload cannot be read (``damagedItems(kind:)``).
    /// - Parameter kind: Only items of this kind; all kinds when nil.
    /// - Returns: The keys, in no particular order.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked`, `.timedOut`, `.tampered`.
    package func list(kind: ItemKey.Kind?) throws -> [ItemKey] {
        try run { connection in
            if let kind, kind != .key {
                // One kind: its payloads by D-Bus path (no item proxies) carry account and name.
                return try connection.envelopes(SecretServiceAttributes.matching(appID, kind: kind))
                    .map { ItemKey(kind: kind, account: $0.account, name: $0.name) }
            }
            let items = try connection.latchkeyItems(
                SecretServiceAttributes.matching(appID, kind: kind), loadSecrets: true)
            let own = items.filter { !SecretServicePseudonymKey.isKeyItem($0.attributes) }
            return try zip(own, LibSecret.Connection.unlockedEnvelopes(own)).compactMap { item, envelope in
                // A payload that cannot be read is damaged, not listed: see damagedItems(kind:).
                guard let envelope else { return nil }
                guard let kind = item.attributes[SecretServiceAttributes.kind],
                    item.attributes[SecretServiceAttributes.name] == envelope.name
                else {
                    throw LatchkeyError(.tampered, "a Secret Service item's attributes do not match its payload")
                }
                return ItemKey(kind: ItemKey.Kind(rawValue: kind), account: envelope.account, name: envelope.name)
            }
        }
    }

    /// Deletes every item of the namespace, the pseudonym key last; items of
    /// other apps and of other programs are untouched.
    ///
    /// A namespace may hold any number of items and a provider such as
    /// gnome-keyring rewrites its keyring file for each deletion, so the deadline
    /// applies to the search and then to each item's deletion (each in its own
    /// turn, letting other calls through in between) rather than to the whole.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked`, `.timedOut`.
    package func deleteAll() throws {
        let items = try run { connection in
            try connection.latchkeyItems(SecretServiceAttributes.matching(appID), loadSecrets: false)
        }
        let keysLast =
            items.filter { !SecretServicePseudonymKey.isKeyItem($0.attributes) }
            + items.filter { SecretServicePseudonymKey.isKeyItem($0.attributes) }
        knownKeys.withLock { $0 = nil }
        knownPaths.withLock { $0 = [:] }
        for item in keysLast {
            try run { try $0.delete(item) }
        }
    }

    /// An item whose payload cannot be read: a provider that lost what it had
    /// acknowledged (KWallet 5.103 stopped within 5 s of a change) keeps the item
    /// with an empty secret. Only its attributes are known.
    package struct DamagedItem: Sendable, Equatable {
        /// The item's kind.
        package let kind: ItemKey.Kind
        /// The item's name (an attribute, so known without the payload).
        package let name: String
        /// The pseudonym of its account, as the attribute holds it (empty for the pseudonym key).
        package let accountPseudonym: String
    }

    /// The namespace's items whose payload cannot be read.
    /// - Parameter kind: Only items of this kind; all kinds when nil.
    /// - Returns: The damaged items, in no particular order.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked`, `.timedOut`, `.io`.
    package func damagedItems(kind: ItemKey.Kind? = nil) throws -> [DamagedItem] {
        try run { connection in try damaged(kind, connection).map(\.description) }
    }

    /// Deletes the namespace's items whose payload cannot be read, which no
    /// address finds (``read(_:)`` reads them as absent): what `logout` and `wipe`
    /// do so that a provider's loss never leaves a namespace that cannot be cleaned.
    /// - Parameters:
    ///   - kind: Only items of this kind; all kinds when nil.
    ///   - account: Only this account's (by pseudonym); every account's when nil.
    /// - Returns: How many were deleted.
    /// - Throws: `LatchkeyError` `.unavailable`, `.locked`, `.timedOut`, `.io`.
    @discardableResult
    package func deleteDamaged(kind: ItemKey.Kind? = nil, account: String? = nil) throws -> Int {
        try run { connection in
            var doomed = try damaged(kind, connection)
            if let account {
                guard let pseudonyms = try loadKeys(connection).pseudonyms else { return 0 }
                doomed = doomed.filter { $0.description.accountPseudonym == pseudonyms.pseudonym(of: account) }
            }
            for item in doomed { try connection.delete(item.item) }
            if doomed.contains(where: { $0.description.kind == .key }) { knownKeys.withLock { $0 = nil } }
            return doomed.count
        }
    }

    /// The damaged items of `kind` (all kinds when nil) with their libsecret items.
    private func damaged(_ kind: ItemKey.Kind?, _ connection: LibSecret.Connection) throws -> [(
        item: LibSecret.Item, description: DamagedItem
    )] {
        let items = try connection.latchkeyItems(SecretServiceAttributes.matching(appID, kind: kind), loadSecrets: true)
        return try zip(items, LibSecret.Connection.unlockedEnvelopes(items)).compactMap { item, envelope in
            guard envelope == nil, let kind = item.attributes[SecretServiceAttributes.kind] else { return nil }
            return (
                item,
                DamagedItem(
                    kind: ItemKey.Kind(rawValue: kind), name: item.attributes[SecretServiceAttributes.name] ?? "",
                    accountPseudonym: item.attributes[SecretServiceAttributes.account] ?? "")
            )
        }
    }

    /// The items of `key` that the pseudonym key does not find: stored under a
    /// pseudonym key the provider lost, found by kind and name and recognised by
    /// their payload.
    private func orphans(of key: ItemKey, _ connection: LibSecret.Connection) throws -> [LibSecret.Item] {
        var attributes = SecretServiceAttributes.matching(appID, kind: key.kind)
        attributes[SecretServiceAttributes.name] = key.name
        let items = try connection.latchkeyItems(attributes, loadSecrets: true)
        return try zip(items, LibSecret.Connection.unlockedEnvelopes(items)).compactMap { item, envelope in
            guard let envelope, envelope.account == key.account, envelope.name == key.name else { return nil }
            return item
        }
    }

    /// Forgets the key items found so far, so the next call looks them up again.
    func forgetKnownKeys() {
        knownKeys.withLock { $0 = nil }
    }

    /// Makes a backend kept from an earlier command (the one a long-lived process, such as
    /// the agent, keeps open) answer the next one as a new process would: a call left
    /// unanswered during an earlier command does not keep this one from asking, and what
    /// the backend knows is used only once the service confirmed it in this command
    /// (``confirmedKeys(_:)``), or while the bus has signalled no change since it was
    /// learnt: the first call turns following the bus on (``Watched``). Its owner calls it
    /// at the start of every command after the first; without it the backend never follows the bus.
    func beginCommand() {
        reachable.withLock { $0 = false }
        silentUntil.withLock { $0 = nil }
        keysConfirmed.withLock { $0 = false }
        watched.withLock { watched in
            watched.isOn = true
            watched.trusted = nil
            watched.servedKeys = false
        }
    }

    // MARK: Following the bus

    /// Whether this backend follows the bus (a kept backend, from its second command on).
    var followsBus: Bool { watched.withLock { $0.isOn } }

    /// The generation of the process's watch of the Secret Service on its session bus: it
    /// moves with every signal that may change what is there (its owner changing; a
    /// collection or item created, changed, deleted, locked or unlocked). A value sampled
    /// earlier and found again means no such signal arrived since, so nothing a vault kept
    /// open learnt has changed; nil while no watch runs (``startFollowingBus()``).
    package static var busGeneration: UInt64? { LibSecret.watchGeneration }

    /// Starts the process's watch of the Secret Service on its session bus, unless it runs
    /// already (``busGeneration``): a message filter and the bus's match rules, once in the
    /// life of the process. A bus that does not take them within the deadline leaves no watch:
    /// what keeps a vault open then opens it for each use, as before.
    package func startFollowingBus() {
        try? LibSecret.withConnection(deadline: deadline) { try $0.watchBus() }
    }

    /// Whether `fact` may be used without asking the service: the backend follows the bus
    /// and no watched signal arrived since it was learnt. Using it makes the command rely
    /// on the current generation, which its calls confirm (``checkDefaultCollection()``, ``watchedRead(_:_:)``).
    private func usesWatched(_ fact: KeyPath<Watched, UInt64?>) -> Bool {
        guard let generation = LibSecret.watchGeneration else { return false }
        return watched.withLock { watched in
            guard watched.isOn, watched[keyPath: fact] == generation, watched.trusted ?? generation == generation
            else { return false }
            watched.trusted = generation
            return true
        }
    }

    /// Notes `fact` as learnt under `before`, the generation sampled before the calls that
    /// learnt it, unless a watched signal arrived since.
    private func learnt(_ fact: WritableKeyPath<Watched, UInt64?>, _ before: UInt64?) {
        guard let before, LibSecret.watchGeneration == before else { return }
        watched.withLock { if $0.isOn { $0[keyPath: fact] = before } }
    }

    /// Drops everything learnt while following the bus, and what this command took from it:
    /// the rest of the command asks the service as a new process does.
    private func forgetWatched() {
        reachable.withLock { $0 = false }
        keysConfirmed.withLock { $0 = false }
        watched.withLock { watched in
            watched.available = nil
            watched.keys = nil
            watched.trusted = nil
        }
    }

    /// Reads `key` in one call when what the backend learnt still holds: its item's known
    /// path (an item of kind `key`: none) and the key items' known paths, together in one
    /// `secret_service_get_secrets_for_dbus_paths_sync`. The key items' values are
    /// replaced by what the service answered, so they are read fresh in every command.
    /// - Returns: The item, or nil when this read is not one the watch can serve (the
    ///   caller reads it as before).
    /// - Throws: ``FullPath`` when the call failed or a watched signal arrived before its
    ///   reply: its result is discarded; `.timedOut` when the service did not answer.
    private func watchedRead(_ key: ItemKey, _ connection: LibSecret.Connection) throws -> StoredItem? {
        guard let generation = LibSecret.watchGeneration else { return nil }
        let (usable, skipped) = watched.withLock { watched in
            (watched.isOn && watched.keys == generation, watched.trusted.map { $0 != generation } ?? false)
        }
        guard usable else {
            if skipped { throw FullPath() }
            return nil
        }
        guard let keys = knownKeys.withLock({ $0 }), let keyPaths = keys.paths, !keyPaths.isEmpty else { return nil }
        let itemPath =
            key.kind == .key
            ? nil
            : knownPaths.withLock { $0[key] }.flatMap { known in
                known.learnt == generation ? known.path : nil
            }
        guard key.kind == .key ? keys.others[key] != nil : itemPath != nil else { return nil }
        let paths = (itemPath.map { [$0] } ?? []) + keyPaths.sorted()
        let found: [(path: String, secret: SecretBytes)]
        do {
            found = try connection.secrets(atPaths: paths)
        } catch let error as LatchkeyError where error.code == .timedOut {
            throw error
        } catch {
            throw FullPath()
        }
        guard LibSecret.watchGeneration == generation, found.count == paths.count else { throw FullPath() }
        var envelopes: [String: SecretServiceEnvelope] = [:]
        for (path, secret) in found {
            guard let envelope = try? SecretServiceEnvelope(decoding: secret, path: path) else { throw FullPath() }
            envelopes[path] = envelope
        }
        guard let fresh = try? Self.keyItems(from: keyPaths.sorted().compactMap { envelopes[$0] }),
            !watched.withLock({ $0.servedKeys }) || fresh.others == keys.others
        else { throw FullPath() }
        knownKeys.withLock { $0 = fresh }
        keysConfirmed.withLock { $0 = true }
        watched.withLock { $0.trusted = generation }
        guard let itemPath else { return fresh.others[key] }
        guard let envelope = envelopes[itemPath], envelope.account == key.account, envelope.name == key.name else {
            throw FullPath()
        }
        return envelope.item
    }

    // MARK: Helpers

    /// Runs one operation within the deadline, checking availability first when
    /// needed. A failure that may mean the service went away makes the next call check again.
    private func run<Result>(_ body: (LibSecret.Connection) throws -> Result) throws -> Result {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            if !reachable.withLock({ $0 }) { try checkAvailability() }
            return try whileAnswering {
                try LibSecret.withConnection(deadline: deadline - (clock.now - start)) { connection in
                    if watched.withLock({ $0.isOn }) {
                        do {
                            try connection.watchBus()
                        } catch let error as LatchkeyError where error.code != .timedOut {
                            // Following the bus only saves calls: a bus that does not take the
                            // match rules leaves the backend asking, as a new process does.
                        }
                    }
                    return try body(connection)
                }
            }
        } catch let error as LatchkeyError where error.code == .unavailable || error.code == .timedOut {
            reachable.withLock { $0 = false }
            throw error
        }
    }

    /// Runs a search with the known pseudonym key; when that finds nothing (or
    /// no key is known), looks the keys up again and, if the pseudonym key
    /// changed, searches once more.
    private func withKnownKey<Found>(
        _ connection: LibSecret.Connection, _ search: (SecretServicePseudonymKey) throws -> [Found]
    ) throws -> [Found] {
        let known = try confirmedKeys(connection)?.pseudonyms
        if let known {
            let found = try search(known)
            if !found.isEmpty { return found }
        }
        guard let current = try loadKeys(connection).pseudonyms, current != known else { return [] }
        return try search(current)
    }

    /// The key items known, once confirmed in this command; nil when none are known.
    ///
    /// A kept backend's first call of a command makes the first call a new process
    /// makes, the search for the key items' paths
    /// (`secret_service_search_for_dbus_paths_sync`), so a hung service fails the
    /// command at that call in both modes. When it finds exactly the unlocked items
    /// last read, the known values are used and their secrets are not read again
    /// (one D-Bus call instead of two); anything else (an item added, gone or locked,
    /// nothing found, which a locked gnome-keyring answers) reads them again as a new
    /// process does, with the same errors.
    private func confirmedKeys(_ connection: LibSecret.Connection) throws -> KeyItems? {
        guard let known = knownKeys.withLock({ $0 }) else { return nil }
        if keysConfirmed.withLock({ $0 }) { return known }
        if let paths = known.paths, !paths.isEmpty {
            let before = LibSecret.watchGeneration
            let found = try connection.paths(
                SecretServiceAttributes.schema, SecretServiceAttributes.matching(appID, kind: .key))
            if found.locked == 0, Set(found.unlocked) == paths {
                keysConfirmed.withLock { $0 = true }
                learnt(\.keys, before)
                return known
            }
        }
        return try loadKeys(connection)
    }

    /// Finds the app's key items in one search (kind `key`) and keeps them.
    private func loadKeys(_ connection: LibSecret.Connection) throws -> KeyItems {
        let before = LibSecret.watchGeneration
        let keys = try Self.keyItems(
            from: connection.envelopes(SecretServiceAttributes.matching(appID, kind: .key)))
        knownKeys.withLock { $0 = keys }
        keysConfirmed.withLock { $0 = true }
        learnt(\.keys, keys.paths == nil ? nil : before)
        return keys
    }

    /// The key items the payloads `envelopes` (of kind `key`) hold.
    /// - Throws: What ``SecretServicePseudonymKey/choose(from:)`` throws.
    private static func keyItems(from envelopes: [SecretServiceEnvelope]) throws -> KeyItems {
        let paths = envelopes.compactMap(\.path)
        var keys = KeyItems(
            pseudonyms: try SecretServicePseudonymKey.choose(
                from: envelopes.filter(SecretServicePseudonymKey.isKeyEnvelope)),
            others: [:], paths: paths.count == envelopes.count ? Set(paths) : nil)
        for envelope in envelopes where !SecretServicePseudonymKey.isKeyEnvelope(envelope) {
            let key = ItemKey(kind: .key, account: envelope.account, name: envelope.name)
            if keys.others[key].map({ $0.created < envelope.item.created }) ?? true { keys.others[key] = envelope.item }
        }
        return keys
    }

    private func attributes(_ key: ItemKey, _ pseudonyms: SecretServicePseudonymKey) -> [String: String] {
        SecretServiceAttributes.item(
            appID, kind: key.kind, accountPseudonym: pseudonyms.pseudonym(of: key.account), name: key.name)
    }
}
