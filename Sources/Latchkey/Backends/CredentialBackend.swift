/// A place that keeps one app namespace's items: the Secret Service, an
/// encrypted file, or memory (for tests).
///
/// The contract every implementation keeps:
/// - An instance serves exactly one app namespace; it never reads, lists or
///   deletes another namespace's items.
/// - It stores every kind of item it is given alike: the app's (`username`,
///   `session`) and Latchkey's own (`setting`, `key`: the user's opt-out, the
///   audit trail's key), each a secret value whose kind, account and name are
///   part of its address.
/// - Reading an absent item returns nil, and deleting an absent item succeeds.
///   "Absent" is never an error, and "cannot reach the store" is never reported
///   as absent.
/// - Failures are `LatchkeyError`s with distinct codes: `.unavailable` (no store),
///   `.locked`, `.timedOut`, `.tampered`, `.wrongKey`, `.insecurePermissions`,
///   `.io`. Their messages never contain a value, an account or an item name.
/// - A write replaces any item with the same key, whole; after it returns the
///   item survives a crash of the process.
/// - All methods are safe to call concurrently from many tasks.
/// - Methods may block (D-Bus, disk, fsync), but never longer than the
///   backend's deadline.
public protocol CredentialBackend: Sendable {
    /// Which kind of store this is.
    var kind: BackendKind { get }

    /// Reads one item.
    /// - Parameter key: The item's address.
    /// - Returns: The item, or nil when there is none.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    func read(_ key: ItemKey) throws -> StoredItem?

    /// Stores one item, replacing any item with the same key.
    /// - Parameters:
    ///   - item: The value and its metadata.
    ///   - key: The item's address.
    /// - Throws: `LatchkeyError` when the item could not be stored durably.
    func write(_ item: StoredItem, for key: ItemKey) throws

    /// Deletes one item; deleting an absent item succeeds.
    /// - Parameter key: The item's address.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    func delete(_ key: ItemKey) throws

    /// Lists the keys of the namespace's items.
    /// - Parameter kind: Only items of this kind; all kinds when nil.
    /// - Returns: The keys, in no particular order.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    func list(kind: ItemKey.Kind?) throws -> [ItemKey]

    /// Deletes every item of the namespace, and whatever the backend keeps only
    /// for it (a vault file and its key file, say).
    /// - Throws: `LatchkeyError` when the store cannot answer.
    func deleteAll() throws
}
