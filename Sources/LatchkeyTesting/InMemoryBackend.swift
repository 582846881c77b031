import Latchkey
import Synchronization

/// A `CredentialBackend` that keeps items in memory, for apps' own tests of
/// their login code without a Secret Service or a vault file.
///
/// It keeps the backend contract: absent is nil, deleting an absent item
/// succeeds, and it is safe to use from many tasks. Nothing survives the
/// instance. Set ``failure`` to make every call throw, to test error paths.
public final class InMemoryBackend: CredentialBackend {
    private let state = Mutex<(items: [ItemKey: StoredItem], failure: LatchkeyError?)>(([:], nil))

    /// Creates an empty backend.
    public init() {}

    /// Always `memory`.
    public var kind: BackendKind { .memory }

    /// An error every call throws while it is set; nil for normal operation.
    public var failure: LatchkeyError? {
        get { state.withLock { $0.failure } }
        set { state.withLock { $0.failure = newValue } }
    }

    /// Reads one item.
    /// - Parameter key: The item's address.
    /// - Returns: The item, or nil.
    /// - Throws: ``failure`` when set.
    public func read(_ key: ItemKey) throws -> StoredItem? {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            return state.items[key]
        }
    }

    /// Stores one item, replacing any item with the same key.
    /// - Parameters:
    ///   - item: The value and its metadata.
    ///   - key: The item's address.
    /// - Throws: ``failure`` when set.
    public func write(_ item: StoredItem, for key: ItemKey) throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            state.items[key] = item
        }
    }

    /// Deletes one item; deleting an absent item succeeds.
    /// - Parameter key: The item's address.
    /// - Throws: ``failure`` when set.
    public func delete(_ key: ItemKey) throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            state.items[key] = nil
        }
    }

    /// Lists the keys of the stored items.
    /// - Parameter kind: Only items of this kind; all when nil.
    /// - Returns: The keys.
    /// - Throws: ``failure`` when set.
    public func list(kind: ItemKey.Kind?) throws -> [ItemKey] {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            return state.items.keys.filter { kind == nil || $0.kind == kind }
        }
    }

    /// Deletes every item.
    /// - Throws: ``failure`` when set.
    public func deleteAll() throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            state.items.removeAll()
        }
    }
}
