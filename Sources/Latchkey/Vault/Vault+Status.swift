extension Vault {
    /// Reports the store in use and why, the protection in plain words, the
    /// policy, and counts of items (never values).
    /// - Returns: The status.
    /// - Throws: `LatchkeyError` when the store cannot answer.
    public func status() throws -> VaultStatus {
        beginOperation()
        let sessions = try backend.list(kind: .session)
        let leftover = backend.kind != .file ? try fileVaultExists() : false
        return VaultStatus(
            appID: appID,
            backend: backend.kind,
            reason: selectionReason,
            protection: try protection(),
            policyName: policy.name,
            policySource: policy.source,
            storeDirectory: storeDirectory,
            fileVaultPath: backend.kind == .file || leftover ? fileVault?.vaultPath : nil,
            leftoverFileVault: leftover,
            usernameRemembered: try backend.read(Vault.usernameItem) != nil,
            usernameMemoryAllowed: try usernameMemorySetting(),
            sessionCount: sessions.count,
            damagedItemCount: try damagedItems().count,
            accountCount: Set(sessions.map(\.account)).count,
            secretCount: try backend.list(kind: .secret).count,
            pendingRotationCount: try pendingRotationCount(),
            auditTrails: [audit?.path, fileAudit?.path].compactMap { $0 })
    }

    /// How many rotated grants whose save failed are kept: on disk, or in this vault's
    /// memory for a vault kept in memory.
    private func pendingRotationCount() throws -> Int {
        guard let kept = pendingRotationVault else { return pendingRotations.withLock { $0.count } }
        guard try kept.store.vaultExists() else { return 0 }
        return try kept.store.list(kind: .session).count
    }

    /// The encrypted vault file of the namespace, when the policy lets it have one.
    package var fileVaultPath: String? { fileVault?.vaultPath }

    /// The namespace's items in the Secret Service whose payload cannot be read
    /// (the provider lost it): none in another store.
    package func damagedItems() throws -> [SecretServiceBackend.DamagedItem] {
        beginOperation()
        return try store.secretService?.damagedItems() ?? []
    }

    private func protection() throws -> String {
        switch backend.kind {
        case .secretService:
            return
                "Secret Service: encrypted by the keyring provider and unlocked with the user's login; other local users cannot read it, programs running as this user can"
        case .file:
            guard let file = store.file else { return "encrypted file" }
            if file.keySourceKind == .passphrase {
                let parameters = try file.vaultKDFParameters().map { ", \($0)" } ?? ""
                return
                    "encrypted file with a passphrase (XChaCha20-Poly1305\(parameters)): a copy of the file, a backup or a stolen disk does not reveal it without the passphrase"
            }
            return
                "encrypted file with a key file on the same disk (\(file.keyFilePath)): protects against copies of the vault alone, not against anyone who can read both files"
        default:
            return "\(backend.kind.rawValue) store supplied by the app: no protection beyond the process"
        }
    }
}
