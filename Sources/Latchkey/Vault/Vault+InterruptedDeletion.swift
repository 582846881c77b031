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
    /// A later ``Vault/open(appID:policy:storeDirectory:backend:passphrase:unlock:)``
    /// finishes a list it finds (``finishInterruptedDeletions()``).
    func deleteRecoverably(
        _ keys: [ItemKey], from store: Store, for event: AuditEvent, changes: ChangeLog
    ) throws {
        guard !keys.isEmpty else { return }
        // The file deletes in one atomic rewrite; a vault kept in memory has nothing to resume after a crash.
        if store.file != nil || storeDirectory == nil {
            try store.delete(keys)
            return
        }
        var planned = LogoutReport()
        planned.wipedSessions = keys.filter { $0.kind == .session }
        planned.wipedSecrets = keys.filter { $0.kind == .secret }
        planned.forgotUsername = keys.contains(Vault.usernameItem)
        try changes.announce("deleting: " + planned.summary)
        let pending = Vault.pendingDeletionItem
        var entries = Dictionary(keys.map { ($0, StoredItem(value: SecretBytes())) }) { first, _ in first }
        entries[Vault.pendingEventEntry] = StoredItem(value: SecretBytes(utf8: event.rawValue))
        let table = VaultTable.encode(entries)
        try namespace.prepare()
        try PrivateFiles.replace(pendingDeletionMarkerPath, with: Array("\(event.rawValue)\n".utf8))
        try changes.willChange(pending, in: store.backend)
        try store.backend.write(StoredItem(value: table), for: pending)
        try store.delete(keys)
        try store.backend.delete(pending)
        try PrivateFiles.remove(pendingDeletionMarkerPath)
    }

    /// Finishes a logout or wipe that an earlier run began in the store in use
    /// and did not complete (a killed process, a daemon that died): deletes what
    /// its list still names, records the event with what was finished, and
    /// removes the list. Nothing happens, and the store is not asked, when the
    /// marker file is absent (``pendingDeletionMarkerPath``).
    /// - Throws: `LatchkeyError` when the store or the trail cannot answer, or
    ///   `.tampered` (recorded as `tamper.detected`, nothing deleted) when the
    ///   list cannot be read or is not one Latchkey writes (``checkedJournal(event:targets:)``).
    func finishInterruptedDeletions() throws {
        guard try POSIX.status(of: pendingDeletionMarkerPath) != nil else { return }
        let pending = Vault.pendingDeletionItem
        guard let list = try backend.read(pending) else {
            try PrivateFiles.remove(pendingDeletionMarkerPath) // cut short before the list was stored
            return
        }
        let (event, targets) = Vault.journalEntries(list.value)
        _ = try perform(event ?? .logout, detail: "the list of an interrupted deletion") {
            changes in
            // Anyone who can write to the store can write this item: only what a logout or a wipe of
            // Latchkey's own would have listed is acted on; anything else deletes nothing.
            let (event, keys) = try Vault.checkedJournal(event: event, targets: targets)
            var report = LogoutReport()
            for key in keys {
                guard try backend.read(key) != nil else { continue }
                try changes.willChange(key, in: backend)
                try backend.delete(key)
                if key.kind == .session { report.wipedSessions.append(key) }
                if key.kind == .secret { report.wipedSecrets.append(key) }
                if key.kind == .username { report.forgotUsername = true }
            }
            try changes.willChange(pending, in: backend)
            try backend.delete(pending)
            return OperationOutcome(report, detail: "finished an interrupted \(event): " + report.summary)
        }
        try PrivateFiles.remove(pendingDeletionMarkerPath)
    }

    /// The events a list may name: the two operations that keep one.
    static let journalEvents: Set<AuditEvent> = [.logout, .wipe]
    /// The event and the targets of a stored list, as far as it decodes: nil
    /// for a part that does not (``checkedJournal(event:targets:)`` says why).
    static func journalEntries(_ value: SecretBytes) -> (event: AuditEvent?, targets: [ItemKey]?) {
        // No bigger than the vault that could hold every item it names.
        guard value.count <= VaultFormat.maximumFileLength,
            var entries = try? VaultTable.decode(value, path: "the list of an interrupted deletion")
        else {
            return (nil, nil)
        }
        let named = entries.removeValue(forKey: Vault.pendingEventEntry)
        let event = named.flatMap { $0.value.utf8String() }.map(AuditEvent.init(rawValue:))
        return (event.flatMap { journalEvents.contains($0) ? $0 : nil }, Array(entries.keys))
    }

    /// The list's event and targets when they are what Latchkey writes: the
    /// event `logout` or `wipe`, and as targets only what those delete: sessions,
    /// named secrets and the remembered username, never a setting (the user's opt-out), a key
    /// (the audit trail's) or the list itself.
    /// - Throws: `.tampered` naming what is wrong (never an account), so that
    ///   a list written by another client of the store deletes nothing.
    static func checkedJournal(event: AuditEvent?, targets: [ItemKey]?) throws -> (AuditEvent, [ItemKey]) {
        let item = "the list of an interrupted deletion (\(pendingDeletionItem))"
        guard let targets else { throw LatchkeyError(.tampered, "\(item) cannot be read; nothing was deleted") }
        guard let event else {
            throw LatchkeyError(
                .tampered, "\(item) names no event Latchkey keeps such a list for (logout, wipe); nothing was deleted")
        }
        if let stray = targets.first(where: { ![.session, .secret].contains($0.kind) && $0 != usernameItem }) {
            throw LatchkeyError(
                .tampered,
                "\(item) names a \(stray.kind) item, which no logout or wipe deletes; nothing was deleted")
        }
        return (event, targets)
    }
}
