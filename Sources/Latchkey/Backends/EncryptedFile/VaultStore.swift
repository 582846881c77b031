/// One vault file as this process last saw it: a cache of the decrypted
/// table, checked against the file before each use (and dropped as each operation of a
/// vault kept open begins, ``forgetContent()``), and the keys for the vault's salt,
/// derived once. Not thread-safe; ``EncryptedFileBackend`` keeps it
/// behind a mutex.
struct VaultStore {
    /// The vault as decoded from one save.
    struct Snapshot {
        /// The header and nonce bytes, which differ between any two saves (fresh nonce).
        var prefix: [UInt8]
        /// The file's length, device, inode and modification time when it was read.
        var size: Int
        var identity: FileIdentity?
        var header: VaultHeader
        var items: VaultEntries
    }

    /// What identifies one version of the vault file besides its bytes.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var modified: Int64

        init(_ status: POSIX.Status) {
            device = status.device
            inode = status.inode
            modified = status.modified
        }
    }

    let namespace: NamespaceDirectory
    let vaultPath: String
    let keyFilePath: String
    let source: KeySource

    private var cached: Snapshot?
    private var keys: (salt: [UInt8], kdf: KDFParameters?, keys: VaultKeys)?
    /// The highest generation seen for a salt, to refuse a rolled-back copy.
    private var seen: (salt: [UInt8], generation: UInt64)?

    init(namespace: NamespaceDirectory, vaultPath: String, keyFilePath: String, source: KeySource) {
        self.namespace = namespace
        self.vaultPath = vaultPath
        self.keyFilePath = keyFilePath
        self.source = source
    }

    /// Forgets the decrypted table, and the keys read from a key file (another process
    /// may replace the file), so that the next use reads both again; keys derived from a
    /// passphrase are kept.
    mutating func forgetContent() {
        cached = nil
        if source.kind == .keyFile { keys = nil }
    }

    /// The vault's current content: the cache when the file's header and nonce
    /// are unchanged (one `open`, `fstat` and `pread`), otherwise read and decrypted.
    /// - Returns: The snapshot, or nil when there is no vault.
    mutating func current() throws -> Snapshot? {
        guard try namespace.requirePrivate(), let file = try openVault() else {
            cached = nil
            return nil
        }
        let status = try file.status()
        try PrivateFiles.requirePrivate(status, path: vaultPath, directory: false)
        if source.kind == .keyFile {
            // Checked on every use, like the vault: the key may have been read earlier.
            try PrivateFiles.requirePrivate(keyFilePath, directory: false)
        }
        let identity = FileIdentity(status)
        if var cached, cached.size == status.size, cached.identity == nil || cached.identity == identity,
            try file.read(upTo: cached.prefix.count, at: 0) == cached.prefix
        {
            if cached.identity == nil {
                cached.identity = identity
                self.cached = cached
            }
            return cached
        }
        var snapshot = try decode(file.readAll(limit: VaultFormat.maximumFileLength, what: "a vault"))
        snapshot.identity = identity
        cached = snapshot
        return snapshot
    }

    /// The vault file's header, decoded and checked without running the KDF.
    /// - Returns: The header, or nil when there is no vault.
    func currentHeader() throws -> VaultHeader? {
        guard try namespace.requirePrivate(), let file = try openVault() else { return nil }
        let status = try file.status()
        try PrivateFiles.requirePrivate(status, path: vaultPath, directory: false)
        let header = try VaultHeader.decode(
            file.read(upTo: VaultHeader.length, at: 0), fileLength: status.size, path: vaultPath)
        try requireOwnNamespace(header)
        return header
    }

    /// Checks that the key source opens the vault, by the header's key check,
    /// without decrypting the table. The keys derived for it are kept for the
    /// reads that follow, so the KDF still runs once per open.
    /// - Throws: `.wrongKey` when the passphrase or key file does not open the
    ///   vault; `.tampered` or `.invalidInput` for a header that cannot be trusted.
    mutating func checkKey() throws {
        guard let header = try currentHeader() else { return }
        guard try keys(for: header).matches(check: header.keyCheck) else {
            if source.kind == .keyFile { keys = nil } // the key file may be replaced; read it again next time
            throw VaultFormat.wrongKey(vaultPath)
        }
    }

    private func openVault() throws -> POSIX.File? {
        do {
            return try POSIX.File.open(vaultPath, .read)
        } catch let error as LatchkeyError where error.code == .notFound {
            return nil
        }
    }

    private mutating func decode(_ bytes: [UInt8]) throws -> Snapshot {
        let header = try VaultHeader.decode(bytes, path: vaultPath)
        try requireOwnNamespace(header)
        if let seen, seen.salt == header.salt, header.generation < seen.generation {
            throw LatchkeyError(
                .tampered,
                "\(vaultPath) was replaced by an older copy (generation \(header.generation) after \(seen.generation))")
        }
        let keys = try keys(for: header)
        let items: VaultEntries
        do {
            items = try VaultFormat.open(bytes, header: header, keys: keys, path: vaultPath)
        } catch let error as LatchkeyError where error.code == .wrongKey && source.kind == .keyFile {
            self.keys = nil // the key file may have been replaced; read it again next time
            throw error
        }
        seen = (header.salt, header.generation)
        return Snapshot(
            prefix: Array(bytes[..<VaultHeader.lengthWithNonce]), size: bytes.count, identity: nil,
            header: header, items: items)
    }

    /// Refuses a vault made for another app namespace (copied over this
    /// one's, with its key file or under the same passphrase) as `tampered`.
    private func requireOwnNamespace(_ header: VaultHeader) throws {
        if header.appID != namespace.appID.rawValue {
            throw LatchkeyError(
                .tampered,
                "\(vaultPath) belongs to the app namespace '\(header.appID)', not '\(namespace.appID)': it was copied or moved here"
            )
        }
    }

    /// The keys for `header`'s salt: cached, or derived once from the key source.
    private mutating func keys(for header: VaultHeader) throws -> VaultKeys {
        guard header.source == source.kind else {
            throw LatchkeyError(
                .wrongKey,
                "\(vaultPath) is protected by a \(header.source == .passphrase ? "passphrase" : "key file"), not by the configured \(source.kind == .passphrase ? "passphrase" : "key file")"
            )
        }
        if let keys, keys.salt == header.salt, keys.kdf == header.kdf { return keys.keys }
        let master: SecretBytes
        switch source {
        case .passphrase(let passphrase, _):
            guard let kdf = header.kdf else {
                throw LatchkeyError(.internal, "passphrase vault header without KDF parameters")
            }
            master = try Sodium.deriveKey(
                length: KeyFile.length, passphrase: passphrase, salt: header.salt, opsLimit: kdf.opsLimit,
                memoryLimit: kdf.memoryLimit)
        case .keyFile:
            guard let key = try KeyFile.read(keyFilePath) else {
                throw LatchkeyError(
                    .wrongKey, "key file \(keyFilePath) is missing; \(vaultPath) cannot be opened without it")
            }
            master = try finishingRotation(key, for: header)
        }
        let derived = VaultKeys(master: master, salt: header.salt)
        keys = (header.salt, header.kdf, derived)
        return derived
    }

    /// The path of a key that ``rotateKey(keeping:after:)`` has written but not
    /// yet given the key file's name.
    var nextKeyFilePath: String { keyFilePath + ".next" }

    /// `key`, or, when it does not open a vault whose key was being replaced
    /// when a writer stopped (the vault already saved under the next key, the
    /// key file not yet renamed), the next key, whose rename this finishes.
    private func finishingRotation(_ key: SecretBytes, for header: VaultHeader) throws -> SecretBytes {
        guard !VaultKeys(master: key, salt: header.salt).matches(check: header.keyCheck),
            let next = try KeyFile.read(nextKeyFilePath),
            VaultKeys(master: next, salt: header.salt).matches(check: header.keyCheck)
        else { return key }
        try POSIX.rename(nextKeyFilePath, to: keyFilePath)
        try POSIX.syncDirectory(namespace.path)
        return next
    }

    /// Replaces the vault with one holding only `items` under a new key, so that
    /// copies of the old ciphertext a file system keeps are useless: for a key
    /// file, a new random key (written first as `<key>.next`, the vault saved
    /// under it, then renamed over the key file; a reader finishes a rotation a
    /// crash interrupted); for a passphrase, a new salt. Each step is atomic and
    /// durable, and every state a crash can leave opens with either the old
    /// contents or `items`. Call it while holding the vault's lock.
    mutating func rotateKey(keeping items: [ItemKey: StoredItem], after previous: Snapshot?) throws {
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltLength)
        let master: SecretBytes
        var kdf: KDFParameters?
        switch source {
        case .passphrase(let passphrase, let choice):
            let parameters = try previous?.header.kdf ?? choice.resolve()
            kdf = parameters
            master = try Sodium.deriveKey(
                length: KeyFile.length, passphrase: passphrase, salt: salt, opsLimit: parameters.opsLimit,
                memoryLimit: parameters.memoryLimit)
        case .keyFile:
            master = SecretBytes.random(count: KeyFile.length)
            try PrivateFiles.replaceSecret(nextKeyFilePath, with: master)
        }
        let vaultKeys = VaultKeys(master: master, salt: salt)
        let header = VaultHeader(
            source: source.kind, kdf: kdf, salt: salt, generation: 1, keyCheck: vaultKeys.check,
            appID: namespace.appID.rawValue)
        let bytes = try VaultFormat.seal(items, header: header, keys: vaultKeys, path: vaultPath)
        try PrivateFiles.replace(vaultPath, with: bytes)
        if source.kind == .keyFile {
            try POSIX.rename(nextKeyFilePath, to: keyFilePath)
            try POSIX.syncDirectory(namespace.path)
        }
        keys = (salt, kdf, vaultKeys)
        cached = Snapshot(
            prefix: Array(bytes[..<VaultHeader.lengthWithNonce]), size: bytes.count, identity: nil, header: header,
            items: VaultEntries(items))
        seen = (salt, header.generation)
    }

    /// Saves `items` as the next generation after `previous` (or as a new vault
    /// when nil), atomically and durably. Call it while holding the vault's lock,
    /// with `previous` read under that lock.
    mutating func save(_ items: [ItemKey: StoredItem], after previous: Snapshot?) throws {
        var header: VaultHeader
        let vaultKeys: VaultKeys
        if let previous {
            guard previous.header.generation < UInt64.max else {
                throw LatchkeyError(.internal, "\(vaultPath) has reached the last generation number")
            }
            header = previous.header
            header.generation += 1
            vaultKeys = try keys(for: previous.header)
        } else {
            let salt = Sodium.randomBytes(count: Sodium.pwhashSaltLength)
            let master: SecretBytes
            var kdf: KDFParameters?
            switch source {
            case .passphrase(let passphrase, let choice):
                let parameters = try choice.resolve()
                kdf = parameters
                master = try Sodium.deriveKey(
                    length: KeyFile.length, passphrase: passphrase, salt: salt, opsLimit: parameters.opsLimit,
                    memoryLimit: parameters.memoryLimit)
            case .keyFile:
                master = try KeyFile.readOrCreate(keyFilePath)
            }
            vaultKeys = VaultKeys(master: master, salt: salt)
            keys = (salt, kdf, vaultKeys)
            header = VaultHeader(
                source: source.kind, kdf: kdf, salt: salt, generation: 1, keyCheck: vaultKeys.check,
                appID: namespace.appID.rawValue)
        }
        let bytes = try VaultFormat.seal(items, header: header, keys: vaultKeys, path: vaultPath)
        try PrivateFiles.replace(vaultPath, with: bytes)
        // The identity is unknown until the next read stats the new file; that read
        // then compares the header and nonce with these and keeps the items.
        cached = Snapshot(
            prefix: Array(bytes[..<VaultHeader.lengthWithNonce]), size: bytes.count, identity: nil, header: header,
            items: VaultEntries(items))
        seen = (header.salt, header.generation)
    }

    /// Forgets the cache and the keys, after the vault and key file were removed.
    mutating func forget() {
        cached = nil
        keys = nil
        seen = nil
    }
}
