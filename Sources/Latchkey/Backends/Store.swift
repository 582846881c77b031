/// A credential store, by what it is: what a ``Vault`` and an ``AuditTrail`` hold, so that
/// they never ask an `any CredentialBackend` which backend it is.
///
/// A vault can stay open across many operations (a long-lived process keeps it), so each
/// operation begins with ``beginOperation()``: the store then answers it as one opened for
/// it would, having kept only what cannot change behind its back (the Secret Service items
/// it found, confirmed again before use; the key derived from a passphrase for a salt).
enum Store: Sendable {
    /// The Secret Service.
    case secretService(SecretServiceBackend)
    /// The encrypted file.
    case file(EncryptedFileBackend)
    /// A store the app supplied, or one kept in memory.
    case other(any CredentialBackend)

    /// The store, as every store is used.
    var backend: any CredentialBackend {
        switch self {
        case .secretService(let service): service
        case .file(let file): file
        case .other(let backend): backend
        }
    }

    /// The kind of store.
    var kind: BackendKind { backend.kind }

    /// The Secret Service backend, when this is the Secret Service.
    var secretService: SecretServiceBackend? {
        guard case .secretService(let service) = self else { return nil }
        return service
    }

    /// The encrypted file backend, when this is the encrypted file.
    var file: EncryptedFileBackend? {
        guard case .file(let file) = self else { return nil }
        return file
    }

    /// Deletes `keys`: in one atomic rewrite for the encrypted file, one item after
    /// another elsewhere.
    /// - Throws: The store's errors.
    func delete(_ keys: [ItemKey]) throws {
        if case .file(let file) = self {
            try file.delete(keys)
        } else {
            for key in keys { try backend.delete(key) }
        }
    }

    /// Makes the store answer the operation that begins as a newly opened one would: the
    /// Secret Service is checked again and the key items known are confirmed before use
    /// (``SecretServiceBackend/beginCommand()``); the encrypted file is read, decrypted
    /// and authenticated again (``EncryptedFileBackend/beginOperation()``).
    func beginOperation() {
        switch self {
        case .secretService(let service): service.beginCommand()
        case .file(let file): file.beginOperation()
        case .other: break
        }
    }

    /// Forgets the key items the store found so far, so that the next read of one asks
    /// the store again (another process may have replaced it).
    func forgetKnownKeys() {
        secretService?.forgetKnownKeys()
    }
}
