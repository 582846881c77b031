import Latchkey
import Synchronization

/// A `CredentialBackend` that keeps items in memory, for apps' own tests of
/// their login code without a Secret Service or a vault file.
///
/// It keeps the backend contract: absent is nil, deleting an absent item
/// succeeds, and it is safe to use from many tasks. Nothing survives the
/// instance. ``fail(_:kind:account:name:with:)`` makes chosen calls throw, per
/// operation and per item, to test error paths such as "the access token saved,
/// the refresh token failed".
public final class InMemoryBackend: CredentialBackend {
    /// A call of the store, as failures are injected into it.
    public enum Operation: String, Sendable, CaseIterable {
        /// ``InMemoryBackend/read(_:)``.
        case read
        /// ``InMemoryBackend/write(_:for:)``.
        case write
        /// ``InMemoryBackend/delete(_:)``.
        case delete
        /// ``InMemoryBackend/list(kind:)``.
        case list
        /// ``InMemoryBackend/deleteAll()``.
        case deleteAll
    }

    /// One injected failure: the calls it matches throw its error.
    private struct Failure {
        let operations: Set<Operation>
        let kind: ItemKey.Kind?
        let account: String?
        let name: String?
        let error: LatchkeyError

        /// Whether a call of `operation` on `key` (nil for `list` and `deleteAll`,
        /// which touch no one item; `listed` is the kind listed) fails.
        func matches(_ operation: Operation, _ key: ItemKey?, listed: ItemKey.Kind? = nil) -> Bool {
            guard operations.contains(operation) else { return false }
            guard let key else {
                return account == nil && name == nil && (kind == nil || listed == nil || kind == listed)
            }
            return (kind ?? key.kind) == key.kind && (account ?? key.account) == key.account
                && (name ?? key.name) == key.name
        }
    }

    private let state = Mutex<(items: [ItemKey: StoredItem], failures: [Failure])>(([:], []))

    /// Creates an empty backend.
    public init() {}

    /// The refresh and commit locks that every vault made on this store shares, as
    /// processes on one store share its lock files.
    let vaultLocks = MemoryStoreLocks()

    /// Always `memory`.
    public var kind: BackendKind { .memory }

    /// Makes the calls of `operations` on the matching items throw `error`, until
    /// ``removeFailures()``. A nil `kind`, `account` or `name` matches any; `list`
    /// and `deleteAll` fail only under a failure that names no account or name
    /// (and, for `list`, no other kind than the one listed).
    ///
    /// For "the access token saved, the refresh token failed":
    /// `fail([.write], name: "refresh", with: LatchkeyError(.io, "disk full"))`.
    /// - Parameters:
    ///   - operations: The calls that fail; every call by default.
    ///   - kind: Only items of this kind.
    ///   - account: Only items of this account.
    ///   - name: Only items of this name.
    ///   - error: What the calls throw.
    public func fail(
        _ operations: Set<Operation> = Set(Operation.allCases), kind: ItemKey.Kind? = nil, account: String? = nil,
        name: String? = nil, with error: LatchkeyError
    ) {
        let failure = Failure(operations: operations, kind: kind, account: account, name: name, error: error)
        state.withLock { $0.failures.append(failure) }
    }

    /// Removes every injected failure: every call succeeds again.
    public func removeFailures() {
        state.withLock { $0.failures.removeAll() }
    }

    /// Reads one item.
    /// - Parameter key: The item's address.
    /// - Returns: The item, or nil.
    /// - Throws: An injected failure that matches.
    public func read(_ key: ItemKey) throws -> StoredItem? {
        try access(.read, key) { $0.items[key] }
    }

    /// Stores one item, replacing any item with the same key.
    /// - Parameters:
    ///   - item: The value and its metadata.
    ///   - key: The item's address.
    /// - Throws: An injected failure that matches.
    public func write(_ item: StoredItem, for key: ItemKey) throws {
        try access(.write, key) { $0.items[key] = item }
    }

    /// Deletes one item; deleting an absent item succeeds.
    /// - Parameter key: The item's address.
    /// - Throws: An injected failure that matches.
    public func delete(_ key: ItemKey) throws {
        try access(.delete, key) { $0.items[key] = nil }
    }

    /// Lists the keys of the stored items.
    /// - Parameter kind: Only items of this kind; all when nil.
    /// - Returns: The keys.
    /// - Throws: An injected failure that matches.
    public func list(kind: ItemKey.Kind?) throws -> [ItemKey] {
        try access(.list, nil, listed: kind) { $0.items.keys.filter { kind == nil || $0.kind == kind } }
    }

    /// Deletes every item.
    /// - Throws: An injected failure that matches.
    public func deleteAll() throws {
        try access(.deleteAll, nil) { $0.items.removeAll() }
    }

    /// Runs `body` on the state unless an injected failure matches the call.
    private func access<Result>(
        _ operation: Operation, _ key: ItemKey?, listed: ItemKey.Kind? = nil,
        _ body: (inout (items: [ItemKey: StoredItem], failures: [Failure])) -> Result
    ) throws -> Result {
        try state.withLock { state in
            if let failure = state.failures.first(where: { $0.matches(operation, key, listed: listed) }) {
                throw failure.error
            }
            return body(&state)
        }
    }
}
