/// Rotated grants whose save failed after the endpoint answered, kept on disk so that the
/// next refresh of the session, in any process (the command line, the agent, an app),
/// saves that answer instead of presenting the spent refresh token again: a key-file vault
/// of their own in the namespace's directory (`pending.vault`, `.key`, `.lock`,
/// `docs/FILE-FORMAT.md`), written atomically and durably under its lock, and only under the
/// namespace's refresh lock.
///
/// One entry per session, at the session's own key: a keyed BLAKE2b digest of the refresh
/// token the rotation spent (under a random key kept in the same vault), then the endpoint's
/// answer as a grant record (``GrantRecord``). An entry applies only while the session still
/// holds that refresh token, so a logout, a deletion or a new login in between wins. An entry
/// goes once it is saved or moot, and the vault (with its key) once no entry is left.
struct PendingRotationVault {
    /// The key-file vault that keeps the entries.
    let store: EncryptedFileBackend

    /// The pending rotations of `appID`'s namespace in `directory`.
    init(appID: AppID, directory: String) {
        store = EncryptedFileBackend.pendingRotations(appID: appID, directory: directory)
    }

    /// The item holding the digest key.
    static let keyItem = ItemKey(kind: .key, name: "pending")
    /// The length of a refresh token's digest.
    private static let digestLength = 32

    /// Keeps, durably, what the endpoint answered to a refresh of `key` that spent `spent`.
    /// - Throws: `LatchkeyError` when the vault cannot be written (nothing was kept).
    func keep(_ answer: Grant, replacing spent: SecretBytes?, for key: ItemKey) throws {
        try store.update { items in
            let digestKey = EncryptedFileBackend.digestKey(at: Self.keyItem, in: &items)
            let digest = SecretBytes(Self.digest(of: spent, key: digestKey))
            items[key] = StoredItem(value: SecretBytes(concatenating: [digest, GrantRecord.encode(answer)]))
            return true
        }
    }

    /// The answer kept for `key`, when the session still holds the refresh token it replaces.
    /// An entry for a session that no longer holds it (a logout, a deletion or a new login
    /// came in between) is moot and is removed here.
    /// - Parameters:
    ///   - key: The session.
    ///   - current: The refresh token the session holds now; nil when the session is gone.
    /// - Returns: The endpoint's answer to adopt, or nil.
    /// - Throws: `LatchkeyError` when the vault cannot be read or written (never taken as no entry).
    func answer(for key: ItemKey, holding current: SecretBytes?) throws -> Grant? {
        guard try store.vaultExists() else { return nil }
        if let current, let entry = try store.read(key), let digestKey = try store.read(Self.keyItem)?.value,
            entry.value.count > Self.digestLength
        {
            let expected = Self.digest(of: current, key: digestKey)
            let record: SecretBytes? = entry.value.withUnsafeBytes { bytes in
                let matches = expected.withUnsafeBytes {
                    Sodium.constantTimeEqual(UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.digestLength)), $0)
                }
                guard matches else { return nil }
                let rest = UnsafeRawBufferPointer(rebasing: bytes.dropFirst(Self.digestLength))
                return SecretBytes(count: rest.count) { $0.copyMemory(from: rest) }
            }
            if let record { return try GrantRecord.decode(record) }
        }
        try drop(removingEmptyVault: true) { $0 == key }
        return nil
    }

    /// Removes the entries of the sessions `doomed` selects.
    /// - Parameters:
    ///   - removingEmptyVault: Whether the vault and its key go too once no entry is left: only
    ///     under the namespace's refresh lock, which every ``keep(_:replacing:for:)`` runs under,
    ///     or once every session is gone, so no entry that matters is lost with them.
    ///   - doomed: Selects the sessions whose entries go.
    /// - Throws: `LatchkeyError` when the vault cannot be written.
    func drop(removingEmptyVault: Bool, where doomed: (ItemKey) -> Bool) throws {
        guard try store.vaultExists() else { return }
        var remaining = 0
        try store.update { items in
            let gone = items.keys.filter { $0.kind == .session && doomed($0) }
            for key in gone { items.removeValue(forKey: key) }
            remaining = items.keys.filter { $0.kind == .session }.count
            return !gone.isEmpty
        }
        if removingEmptyVault, remaining == 0 { try store.deleteAll() }
    }

    /// The keyed BLAKE2b digest of a refresh token (of no bytes for none).
    private static func digest(of token: SecretBytes?, key: SecretBytes) -> [UInt8] {
        Sodium.keyedHash(of: token ?? SecretBytes(), key: key, length: digestLength)
    }
}
