import Synchronization

/// Keeps one app namespace in a libsodium-encrypted vault file: the embedded
/// store where no Secret Service runs.
///
/// The vault is `<appid>.vault` in `directory` (0700), with `<appid>.lock` and,
/// for ``KeySource/keyFile``, `<appid>.key` (all 0600). The whole entry table is
/// one XChaCha20-Poly1305 ciphertext; the format is in `docs/FILE-FORMAT.md`.
///
/// The key is derived once per instance (and vault). Reads are served from a
/// decrypted cache after checking, with one `pread` of the header and nonce,
/// that the file has not been replaced. Writes lock `<appid>.lock` for the
/// whole read-modify-write and replace the vault atomically and durably, so
/// writers in different processes never lose each other's updates and readers
/// never see a partial vault.
package final class EncryptedFileBackend: CredentialBackend {
    /// The app namespace this backend serves.
    package let appID: AppID
    /// The store directory.
    package let directory: String
    /// The vault file's path.
    package let vaultPath: String
    /// The key file's path (used only with ``KeySource/keyFile``).
    package let keyFilePath: String
    /// The lock file's path.
    package let lockPath: String
    /// Whether the vault is opened with a passphrase or a key file.
    package let keySourceKind: KeySource.Kind

    private let store: Mutex<VaultStore>

    /// Creates a backend for `appID`'s vault in `directory`. Nothing is read or
    /// created until the first call.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - directory: The store directory, such as `$XDG_DATA_HOME/latchkey`;
    ///     created (0700) on the first write.
    ///   - keySource: The passphrase or key file that opens the vault.
    package convenience init(appID: AppID, directory: String, keySource: KeySource) {
        self.init(appID: appID, fileStem: appID.rawValue, directory: directory, keySource: keySource)
    }

    /// Creates a backend whose files are named `<fileStem>.vault` and so on,
    /// for stores Latchkey keeps beside an app's vault (the audit keys).
    init(appID: AppID, fileStem: String, directory: String, keySource: KeySource) {
        let trimmed = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        self.appID = appID
        self.directory = trimmed
        vaultPath = "\(trimmed)/\(fileStem).vault"
        keyFilePath = "\(trimmed)/\(fileStem).key"
        lockPath = "\(trimmed)/\(fileStem).lock"
        keySourceKind = keySource.kind
        store = Mutex(VaultStore(directory: trimmed, vaultPath: vaultPath, keyFilePath: keyFilePath, source: keySource))
    }

    /// Always `.file`.
    package var kind: BackendKind { .file }

    /// The Argon2id parameters in the vault's header, read without running the KDF.
    /// - Returns: The parameters, or nil when there is no vault or it uses a key file.
    /// - Throws: `LatchkeyError` `.tampered`, `.invalidInput` or `.insecurePermissions`
    ///   when the header cannot be trusted.
    package func vaultKDFParameters() throws -> KDFParameters? {
        try store.withLock { try $0.currentHeader()?.kdf }
    }

    /// Reads one item.
    /// - Parameter key: The item's address.
    /// - Returns: The item, or nil when there is none (or no vault).
    /// - Throws: `LatchkeyError` `.wrongKey`, `.tampered`, `.invalidInput`,
    ///   `.insecurePermissions` or `.io`.
    package func read(_ key: ItemKey) throws -> StoredItem? {
        try store.withLock { try $0.current()?.items[key] }
    }

    /// Stores one item, replacing any item with the same key; durable when it returns.
    /// - Parameters:
    ///   - item: The value and its metadata.
    ///   - key: The item's address.
    /// - Throws: `LatchkeyError`; on any error the vault is unchanged.
    package func write(_ item: StoredItem, for key: ItemKey) throws {
        try VaultTable.validate(key, item)
        try modify { items in
            items[key] = item
            return true
        }
    }

    /// Stores many items in one save (for imports and tests), replacing items with the same keys.
    /// - Parameter items: The items and their addresses.
    /// - Throws: `LatchkeyError`; on any error the vault is unchanged.
    func write(contentsOf items: [ItemKey: StoredItem]) throws {
        for (key, item) in items { try VaultTable.validate(key, item) }
        try modify { current in
            current.merge(items) { _, new in new }
            return !items.isEmpty
        }
    }

    /// Deletes one item; deleting an absent item succeeds without rewriting the vault.
    /// - Parameter key: The item's address.
    /// - Throws: `LatchkeyError`; on any error the vault is unchanged.
    package func delete(_ key: ItemKey) throws {
        try modify { items in items.removeValue(forKey: key) != nil }
    }

    /// Lists the keys of the vault's items.
    /// - Parameter kind: Only items of this kind; all kinds when nil.
    /// - Returns: The keys, in no particular order.
    /// - Throws: `LatchkeyError` as for ``read(_:)``.
    package func list(kind: ItemKey.Kind?) throws -> [ItemKey] {
        try store.withLock { store in
            guard let items = try store.current()?.items else { return [] }
            return kind.map { kind in items.keys.filter { $0.kind == kind } } ?? Array(items.keys)
        }
    }

    /// Deletes the vault, its key file and its lock file, so copies of the
    /// ciphertext a file system may keep are useless. No key is needed.
    /// - Throws: `LatchkeyError` `.io` when a file cannot be removed.
    package func deleteAll() throws {
        guard try POSIX.status(of: directory) != nil else {
            store.withLock { $0.forget() }
            return
        }
        try PrivateFiles.withRemovableExclusiveLock(lockPath) {
            try store.withLock { store in
                store.forget()
                try PrivateFiles.removeLeftovers(of: vaultPath)
                try PrivateFiles.removeLeftovers(of: keyFilePath)
                try PrivateFiles.remove(vaultPath)
                try PrivateFiles.remove(keyFilePath)
                try PrivateFiles.remove(lockPath)
            }
        }
    }

    /// Runs a read-modify-write under the vault's lock. `change` returns whether
    /// it changed anything; nothing is written when it did not.
    private func modify(_ change: (inout [ItemKey: StoredItem]) -> Bool) throws {
        try PrivateFiles.prepareDirectory(directory)
        try PrivateFiles.withRemovableExclusiveLock(lockPath) {
            try store.withLock { store in
                let previous = try store.current()
                var items = previous?.items ?? [:]
                guard change(&items) else { return }
                try store.save(items, after: previous)
                try PrivateFiles.removeLeftovers(of: vaultPath)
            }
        }
    }
}
