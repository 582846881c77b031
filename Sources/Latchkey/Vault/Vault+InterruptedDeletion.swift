extension Vault {
    /// The item that lists what a logout or wipe in a store without atomic
    /// rewrites (the Secret Service) is deleting, while it does so: its value is
    /// an entry table (``VaultTable``) of the keys with empty values, plus
    /// ``pendingEventEntry`` naming the event, kept in the store's encrypted
    /// payload, never in an attribute.
    static let pendingDeletionItem = ItemKey(kind: .setting, name: "pending.deletion")
    /// The entry of the pending list whose value names the event (`logout`, `wipe`).
    static let pendingEventEntry = ItemKey(kind: .setting, name: "pending.event")

    /// A file in the namespace's directory that stands while a list is kept in
    /// the store: written before the list and removed after it, so an open that
    /// finds no file knows there is nothing to finish without asking the store.
    var pendingDeletionMarkerPath: String { namespace.file("pending-deletion") }

    /// Deletes `keys` from `store` so that a run cut short part-way is both
    /// visible and finished later. The encrypted file deletes them in one atomic
    /// rewrite. Elsewhere, one item at a time: first the trail records
    /// `<event>.started` saying what is about to go, and the list is kept in the
    /// store as ``pendingDeletionItem``; then the items are deleted, then the list.
    /// A later ``Vault/open(appID:policy:storeDirectory:backend:passphrase:)``
    /// finishes a list it finds (``finishInterruptedDeletions()``).
    func deleteRecoverably(
        _ keys: [ItemKey], from store: any CredentialBackend, for event: AuditEvent, changes: ChangeLog
    ) throws {
        guard !keys.isEmpty else { return }
        if store is EncryptedFileBackend {
            try Vault.delete(keys, from: store)
            return
        }
        var planned = LogoutReport()
        planned.wipedSessions = keys.filter { $0.kind == .session }
        planned.forgotUsername = keys.contains(Vault.usernameItem)
        try changes.announce("deleting: " + planned.summary)
        let pending = Vault.pendingDeletionItem
        var entries = Dictionary(keys.map { ($0, StoredItem(value: SecretBytes())) }) { first, _ in first }
        entries[Vault.pendingEventEntry] = StoredItem(value: SecretBytes(utf8: event.rawValue))
        let table = VaultTable.encode(entries)
        try namespace.prepare()
        try PrivateFiles.replace(pendingDeletionMarkerPath, with: Array("\(event.rawValue)\n".utf8))
        try changes.willChange(pending, in: store)
        try store.write(StoredItem(value: table), for: pending)
        try Vault.delete(keys, from: store)
        try store.delete(pending)
        try PrivateFiles.remove(pendingDeletionMarkerPath)
    }

    /// Finishes a logout or wipe that an earlier run began in the store in use
    /// and did not complete (a killed process, a daemon that died): deletes what
    /// its list still names, records the event with what was finished, and
    /// removes the list. Nothing happens, and the store is not asked, when the
    /// marker file is absent (``pendingDeletionMarkerPath``).
    /// - Throws: `LatchkeyError` when the store or the trail cannot answer, or
    ///   `.tampered` when the list cannot be read.
    func finishInterruptedDeletions() throws {
        guard try POSIX.status(of: pendingDeletionMarkerPath) != nil else { return }
        let pending = Vault.pendingDeletionItem
        guard let list = try backend.read(pending) else {
            try PrivateFiles.remove(pendingDeletionMarkerPath) // cut short before the list was stored
            return
        }
        var entries = try VaultTable.decode(list.value, path: "the list of an interrupted deletion")
        let named = entries.removeValue(forKey: Vault.pendingEventEntry)
        let event =
            named.flatMap { $0.value.withUnsafeBytes { String(validating: $0, as: UTF8.self) } }.map(
                AuditEvent.init(rawValue:)) ?? .logout
        _ = try perform(event) { changes in
            var report = LogoutReport()
            for key in entries.keys {
                guard try backend.read(key) != nil else { continue }
                try changes.willChange(key, in: backend)
                try backend.delete(key)
                if key.kind == .session { report.wipedSessions.append(key) }
                if key == Vault.usernameItem { report.forgotUsername = true }
            }
            try changes.willChange(pending, in: backend)
            try backend.delete(pending)
            return OperationOutcome(report, detail: "finished an interrupted \(event): " + report.summary)
        }
        try PrivateFiles.remove(pendingDeletionMarkerPath)
    }
}
