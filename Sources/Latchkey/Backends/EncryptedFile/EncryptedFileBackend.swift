import Synchronization

/// Keeps one app namespace in a libsodium-encrypted vault file: the embedded
/// store where no Secret Service runs.
///
/// The vault is `credentials.vault` in the namespace's own directory
/// `<directory>/<appid>.d/` (0700, see ``NamespaceDirectory``), with
/// `credentials.lock` and, for ``KeySource/keyFile``, `credentials.key` (all 0600). The whole entry table is
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
    /// The namespace's own directory inside it, which holds the files.
    package let namespace: NamespaceDirectory
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
        self.init(
            appID: appID, fileStem: NamespaceDirectory.credentialsStem, directory: directory, keySource: keySource)
    }

    /// The key-file vault beside an app's vault that holds the key and anchor of
    /// the encrypted file's audit trail (`audit-keys.vault`).
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - directory: The store directory.
    /// - Returns: The backend.
    package static func auditKeys(appID: AppID, directory: String) -> EncryptedFileBackend {
        EncryptedFileBackend(
            appID: appID, fileStem: NamespaceDirectory.auditKeysStem, directory: directory, keySource: .keyFile)
    }

    /// The key-file vault beside an app's vault that keeps the deletions made while a
    /// migration awaits its verification (`tombstones.vault`, ``MigrationTombstones``).
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - directory: The store directory.
    /// - Returns: The backend.
    static func tombstones(appID: AppID, directory: String) -> EncryptedFileBackend {
        EncryptedFileBackend(
            appID: appID, fileStem: NamespaceDirectory.tombstonesStem, directory: directory, keySource: .keyFile)
    }

    /// The key-file vault beside an app's vault that keeps rotated grants whose save failed
    /// after the endpoint answered (`pending.vault`, ``PendingRotationVault``).
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - directory: The store directory.
    /// - Returns: The backend.
    static func pendingRotations(appID: AppID, directory: String) -> EncryptedFileBackend {
        EncryptedFileBackend(
            appID: appID, fileStem: NamespaceDirectory.pendingRotationsStem, directory: directory,
            keySource: .keyFile)
    }

    /// The random key for keyed digests that a small vault of this kind keeps at `item`
    /// among `items` (the entries ``update(_:)`` hands over), made and added when missing.
    static func digestKey(at item: ItemKey, in items: inout [ItemKey: StoredItem]) -> SecretBytes {
        if let kept = items[item]?.value, kept.count == Sodium.genericHashKeyLength { return kept }
        let key = SecretBytes.random(count: Sodium.genericHashKeyLength)
        items[item] = StoredItem(value: key)
        return key
    }

    /// Creates a backend whose files are named `<fileStem>.vault` and so on in
    /// the namespace's directory.
    private init(appID: AppID, fileStem: String, directory: String, keySource: KeySource) {
        let namespace = NamespaceDirectory(appID: appID, storeDirectory: directory)
        self.appID = appID
        self.directory = namespace.storeDirectory
        self.namespace = namespace
        vaultPath = namespace.file(fileStem + ".vault")
        keyFilePath = namespace.file(fileStem + ".key")
        lockPath = namespace.file(fileStem + ".lock")
        keySourceKind = keySource.kind
        store = Mutex(
            VaultStore(namespace: namespace, vaultPath: vaultPath, keyFilePath: keyFilePath, source: keySource))
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

    /// The salt in the vault's header, read without running the KDF: what binds a
    /// passphrase the agent caches to this vault (it changes only when the vault is
    /// made anew or its key is replaced).
    /// - Returns: The salt, or nil when there is no vault.
    /// - Throws: `LatchkeyError` when the header cannot be trusted.
    package func vaultSalt() throws -> [UInt8]? {
        try store.withLock { try $0.currentHeader()?.salt }
    }

    /// Opens and authenticates the whole vault with the key source given, so a
    /// passphrase is known to open it before anyone keeps it.
    /// - Returns: The vault's salt, or nil when there is no vault.
    /// - Throws: `LatchkeyError` `.wrongKey` when the passphrase does not open it; `.tampered`; `.io`.
    package func authenticatedSalt() throws -> [UInt8]? {
        try store.withLock { try $0.current()?.header.salt }
    }

    /// Checks, without decrypting it, that the configured passphrase or key file
    /// opens the vault; nothing to check when there is no vault yet.
    /// - Throws: `LatchkeyError` `.wrongKey` when it does not; `.tampered`,
    ///   `.invalidInput` or `.insecurePermissions` when the header cannot be trusted.
    package func checkKey() throws {
        try store.withLock { try $0.checkKey() }
    }

    /// Makes the next use read, decrypt and authenticate the vault file again, and read
    /// the key file again, as a newly opened backend would: a vault kept open across
    /// operations (``Vault``) calls it as each one begins, so an edit of the file in
    /// place is caught by the next operation. The key derived from a passphrase for the
    /// vault's salt is kept (it follows from the passphrase and the salt alone), and so
    /// is the highest generation seen, which refuses a rolled-back copy.
    func beginOperation() {
        store.withLock { $0.forgetContent() }
    }

    /// Whether the vault file exists.
    /// - Throws: `LatchkeyError` when the namespace's files cannot be checked.
    package func vaultExists() throws -> Bool {
        try POSIX.status(of: vaultPath) != nil
    }

    /// Reads one item.
    /// - Parameter key: The item's address.
    /// - Returns: The item, or nil when there is none (or no vault).
    /// - Throws: `LatchkeyError` `.wrongKey`, `.tampered`, `.invalidInput`,
    ///   `.insecurePermissions` or `.io`.
    package func read(_ key: ItemKey) throws -> StoredItem? {
        try store.withLock { try $0.current()?.items.item(for: key) }
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

    /// Stores many items in one save (for imports, tests and the bench, which fills a vault
    /// with 10,000 entries without 10,000 saves), replacing items with the same keys.
    /// - Parameter items: The items and their addresses.
    /// - Throws: `LatchkeyError`; on any error the vault is unchanged.
    package func write(contentsOf items: [ItemKey: StoredItem]) throws {
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
            try store.current()?.items.keys(kind: kind) ?? []
        }
    }

    /// Deletes the vault, its key file and its lock file, so copies of the
    /// ciphertext a file system may keep are useless, and the namespace's
    /// directory when nothing else is left in it. No key is needed.
    /// - Throws: `LatchkeyError` `.io` when a file cannot be removed.
    package func deleteAll() throws {
        guard try POSIX.status(of: namespace.path) != nil else {
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
        // The namespace's directory goes too once nothing else (a trail) is in it.
        try POSIX.removeDirectoryIfEmpty(namespace.path)
        try POSIX.syncDirectory(directory)
    }

    /// Deletes `keys` in one atomic, durable rewrite of the vault: a crash or a
    /// kill leaves all of them or none (a logout is one change, not one per session).
    /// - Parameter keys: The items to delete; absent ones are skipped.
    /// - Throws: `LatchkeyError`; on any error the vault is unchanged.
    package func delete(_ keys: [ItemKey]) throws {
        try modify { items in
            keys.reduce(false) { changed, key in items.removeValue(forKey: key) != nil || changed }
        }
    }

    /// Wipes the vault down to the items `keep` selects (the user's opt-out
    /// setting) and destroys its key, as one change: the rest of the vault goes
    /// in the same atomic rewrite that brings in the new key (``VaultStore/rotateKey(keeping:after:)``),
    /// so no crash and no second wipe running at the same time can lose a kept item.
    /// - Parameter keep: Whether an item stays.
    /// - Returns: The keys that were removed.
    /// - Throws: `LatchkeyError`; on any error the vault keeps its old contents or the new ones, whole.
    package func wipe(keeping keep: (ItemKey) -> Bool) throws -> [ItemKey] {
        guard try namespace.requirePrivate() else { return [] }
        return try PrivateFiles.withRemovableExclusiveLock(lockPath) {
            try store.withLock { store in
                guard let previous = try store.current() else { return [] }
                let items = previous.items.all
                let kept = items.filter { keep($0.key) }
                try store.rotateKey(keeping: kept, after: previous)
                try PrivateFiles.removeLeftovers(of: vaultPath)
                return items.keys.filter { !keep($0) }
            }
        }
    }

    /// Changes the vault's items in one read-modify-write under its lock, atomically and
    /// durably. `change` returns whether it changed anything; nothing is written when it did not.
    /// - Throws: `LatchkeyError`; `.invalidInput` for an item the vault cannot hold; on any error the vault is unchanged.
    func update(_ change: (inout [ItemKey: StoredItem]) -> Bool) throws {
        var invalid: LatchkeyError?
        try modify { items in
            guard change(&items) else { return false }
            do {
                for (key, item) in items { try VaultTable.validate(key, item) }
            } catch let error as LatchkeyError {
                invalid = error
                return false
            } catch {
                invalid = LatchkeyError(.internal, "\(error)")
                return false
            }
            return true
        }
        if let invalid { throw invalid }
    }

    /// Runs a read-modify-write under the vault's lock. `change` returns whether
    /// it changed anything; nothing is written when it did not.
    private func modify(_ change: (inout [ItemKey: StoredItem]) -> Bool) throws {
        try namespace.prepare()
        try PrivateFiles.withRemovableExclusiveLock(lockPath) {
            try store.withLock { store in
                let previous = try store.current()
                var items = previous?.items.all ?? [:]
                guard change(&items) else { return }
                try store.save(items, after: previous)
                try PrivateFiles.removeLeftovers(of: vaultPath)
            }
        }
    }
}
