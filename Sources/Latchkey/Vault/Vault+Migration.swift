#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Vault {
    #if LATCHKEY_TEST_SEAMS
        /// A test seam (only in a build with LATCHKEY_TEST_SEAMS=1, as `make test` makes): called after each migration step with the
        /// step's number (1 for the first item copied and verified, then one per item,
        /// then the file vault's destruction), so tests can kill the process at every step.
        @TaskLocal package static var migrationStepObserver: (@Sendable (Int) -> Void)?
        /// A test seam (only in a build with LATCHKEY_TEST_SEAMS=1, as `make test` makes): replaces ``migrationMinimumAge`` when set.
        @TaskLocal package static var migrationMinimumAgeForTests: Double?
    #endif

    /// How long, in seconds, a copy into the Secret Service must have stood before a
    /// later open may destroy the file vault it came from: 10 s. kwalletd5 writes its
    /// wallet file 5 s after the last change and does not save on SIGTERM, so an item
    /// it acknowledged can still be lost within 5 s; twice that leaves room for a loaded machine.
    public static let migrationMinimumAge: Double = 10

    /// Tells the test seam, where it is compiled, that migration step `step` is done.
    private static func migrationStepDone(_ step: Int) {
        #if LATCHKEY_TEST_SEAMS
            migrationStepObserver?(step)
        #endif
    }

    /// Moves every item of a leftover encrypted file vault into the Secret Service,
    /// and destroys the file vault and its key only once a *later* open has read
    /// every moved item back.
    ///
    /// The rule: the open that copies an item reads it back at once (a copy that does
    /// not read back as written stops the migration, the file kept), then records in
    /// the file vault itself (an encrypted entry, written atomically and durably) which
    /// items it copied, by key and a BLAKE2b digest of each value (never a value), with
    /// the time and a random identity of its process, and last writes that identity to
    /// the Secret Service as the copy's confirmation (`setting`/`migration.confirmation`).
    /// The file vault is destroyed only by an open in another process, at least
    /// ``migrationMinimumAge`` (10 s) after that record, that finds every recorded item
    /// in the Secret Service as it was copied (or replaced by a newer one). A provider may
    /// acknowledge an item it has not saved yet (kwalletd5 writes its wallet file 5 s after
    /// the last change and does not save on SIGTERM), so one acknowledgement, or a read-back
    /// in the same process, is never enough.
    ///
    /// An acknowledged deletion is never undone: an item deleted while the file vault could
    /// not be opened (a passphrase vault, no passphrase given) left a tombstone
    /// (`tombstones.vault`, `docs/FILE-FORMAT.md`), and its file copy is removed, not copied. A recorded item
    /// missing from the Secret Service while the confirmation stands was kept by the
    /// provider and deleted since by another client: its file copy is removed, and the
    /// wait does not start over. An item missing while the confirmation is gone or
    /// another's (the provider lost what it had not saved, the confirmation written last
    /// with it) is copied again and the wait starts over. A crash at any point loses
    /// nothing, and running it again finishes the job. An item the Secret Service already
    /// holds in a newer version is kept.
    /// - Returns: What was moved, and whether the file vault was destroyed or still
    ///   awaits that later open (``MigrationReport/awaitingVerification``).
    /// - Throws: `LatchkeyError` `.unavailable` when the Secret Service is not
    ///   the store in use; `.wrongKey` when the file vault needs a passphrase;
    ///   `.internal` when an item does not read back as written; store errors.
    @discardableResult
    public func migrate() throws -> MigrationReport {
        beginOperation()
        guard backend.kind == .secretService else {
            throw LatchkeyError(
                .unavailable,
                "the Secret Service is not the store in use (\(selectionReason)), so there is nothing to migrate into")
        }
        guard try fileVaultExists() else {
            // Tombstones outlive their file vault only when a crash came between the two removals.
            if storeDirectory != nil, fileVault != nil, try tombstones.store.vaultExists() {
                try tombstones.destroy()
            }
            return MigrationReport()
        }
        guard let fileVault else {
            throw LatchkeyError(.wrongKey, "the encrypted vault of \(appID) needs its passphrase to be migrated")
        }
        return try perform(.migrate) { changes in
            var report = MigrationReport()
            let record = try MigrationRecord(fileVault.read(MigrationRecord.key))
            let confirmed = try record.map { try isConfirmed($0) } ?? false
            let deleted = try tombstones.matcher()
            var copied: [ItemKey: StoredItem] = [:]
            var step = 0
            for key in try fileVault.list(kind: nil) where key != MigrationRecord.key {
                guard let item = try fileVault.read(key) else { continue }
                let tombstoned = deleted(key, item)
                let existing = tombstoned ? nil : try backend.read(key)
                if tombstoned || (existing == nil && confirmed && record?.holds(key, item) == true) {
                    // Deleted during the window: by this namespace (a tombstone), or by another client
                    // after the provider kept the copy (its confirmation stands). Never copied back.
                    try changes.willChange(key, in: fileVault)
                    try fileVault.delete(key)
                    report.droppedDeleted += 1
                } else if let existing, existing.created > item.created {
                    report.keptNewer += 1
                } else if let existing, existing.hasSameContent(as: item) {
                    copied[key] = item
                } else {
                    try changes.willChange(key, in: backend)
                    try backend.write(item, for: key)
                    guard let copy = try backend.read(key), copy.hasSameContent(as: item) else {
                        throw LatchkeyError(
                            .internal,
                            "an item did not read back from the Secret Service as written; the file vault is kept")
                    }
                    copied[key] = item
                    report.moved += 1
                }
                step += 1
                Vault.migrationStepDone(step)
            }
            let now = clock.now()
            let covered =
                report.moved == 0 && confirmed
                && record.map { record in copied.allSatisfy { record.holds($0, $1) } } == true
            if covered, let record, record.process != Vault.migrationProcess,
                now.timeIntervalSince(record.copied) >= Vault.minimumMigrationAge
            {
                try changes.willChangeEverything(in: fileVault)
                try fileVault.deleteAll()
                try tombstones.destroy()
                try changes.willChange(MigrationRecord.confirmationKey, in: backend)
                try backend.delete(MigrationRecord.confirmationKey)
                report.destroyedFileVault = true
            } else {
                report.awaitingVerification = true
                if !covered {
                    try changes.willChange(MigrationRecord.key, in: fileVault)
                    let fresh = MigrationRecord(copied: now, process: Vault.migrationProcess, items: copied)
                    try fileVault.write(fresh.stored, for: MigrationRecord.key)
                    // Last: a provider that loses what it has not saved loses this with the copies.
                    try changes.willChange(MigrationRecord.confirmationKey, in: backend)
                    try backend.write(fresh.confirmation, for: MigrationRecord.confirmationKey)
                }
            }
            Vault.migrationStepDone(step + 1)
            guard report.moved > 0 || report.droppedDeleted > 0 || report.destroyedFileVault || !covered else {
                return .unrecorded(report)
            }
            return OperationOutcome(report, detail: report.summary)
        }
    }

    /// Whether the Secret Service holds `record`'s confirmation: the provider kept the
    /// copies written before it. One it lost, or cannot give back, is not.
    private func isConfirmed(_ record: MigrationRecord) throws -> Bool {
        guard let stored = try backend.read(MigrationRecord.confirmationKey) else { return false }
        return stored.value == record.confirmation.value
    }

    /// Deletes `key` from the store in use and from a leftover file vault (one a
    /// migration keeps until a later open reads its copies back), so a deleted item
    /// never comes back from the file; when that file vault cannot be opened, a
    /// tombstone is recorded first (``recordTombstones(_:)``).
    func deleteEverywhere(_ key: ItemKey, changes: ChangeLog) throws {
        try recordTombstones([.item(key)])
        try changes.willChange(key, in: backend)
        try backend.delete(key)
        if key.kind == .session { try forgetPendingRotations(removingEmptyVault: false) { $0 == key } }
        guard backend.kind != .file, let fileVault, try fileVaultExists() else { return }
        try changes.willChange(key, in: fileVault)
        try fileVault.delete(key)
    }

    /// The namespace's tombstones (``MigrationTombstones``).
    var tombstones: MigrationTombstones {
        MigrationTombstones(appID: appID, directory: namespace.storeDirectory)
    }

    /// Records, before a deletion in the store in use, what it covers as tombstones, when
    /// a file vault awaits its migration and this vault cannot open it (a passphrase vault
    /// opened without the passphrase), so the open that finishes the migration never
    /// copies what was deleted back. Nothing is recorded otherwise: an openable file vault
    /// has the deletion made in it directly.
    func recordTombstones(_ patterns: [MigrationTombstones.Pattern]) throws {
        guard backend.kind != .file, fileVault == nil, storeDirectory != nil,
            try POSIX.status(of: namespace.file(NamespaceDirectory.credentialsStem + ".vault")) != nil
        else { return }
        try tombstones.record(patterns, at: clock.now())
    }

    /// A random identity of this process, for the migration rule "a later open, in another process".
    static let migrationProcess = Hex.encode(Sodium.randomBytes(count: 16))

    /// ``migrationMinimumAge``, or the test seam's value where it is compiled.
    private static var minimumMigrationAge: Double {
        #if LATCHKEY_TEST_SEAMS
            if let age = migrationMinimumAgeForTests { return age }
        #endif
        return migrationMinimumAge
    }
}

/// What a migration copied into the Secret Service, kept in the file vault it came
/// from (one entry, `setting`/`migration.record`, so it is encrypted, authenticated
/// and written atomically and durably with the vault) until a later open has read
/// every copied item back: each item's key with a BLAKE2b digest of its value and its
/// times, and when and by which process the copy was made.
struct MigrationRecord {
    /// The file vault entry holding the record.
    static let key = ItemKey(kind: .setting, name: "migration.record")
    /// The record's own entry within its table: the copying process, at the time of the copy.
    private static let header = ItemKey(kind: .setting, name: "migration.copied")

    /// When the copy was made.
    var copied: Date
    /// ``Vault/migrationProcess`` of the process that made it.
    var process: String
    /// Each copied item's key, with the digest of its value in place of the value.
    private var digests: [ItemKey: StoredItem]

    /// A record of `items`, copied at `copied` by `process`.
    init(copied: Date, process: String, items: [ItemKey: StoredItem]) {
        self.copied = copied
        self.process = process
        digests = items.mapValues { Self.digested($0) }
    }

    /// The record stored as `stored`; nil when there is none or it does not decode
    /// (then the copy is recorded afresh and the wait starts over: nothing is lost).
    init?(_ stored: StoredItem?) throws {
        guard let stored, var table = try? VaultTable.decode(stored.value, path: "the migration record"),
            let header = table.removeValue(forKey: Self.header),
            let process = header.value.utf8String()
        else { return nil }
        copied = header.created
        self.process = process
        digests = table
    }

    /// The Secret Service item that confirms a copy: written after every copied item, holding
    /// the record's identity (``confirmation``), so finding it proves the provider kept them.
    static let confirmationKey = ItemKey(kind: .setting, name: "migration.confirmation")

    /// The confirmation of this record's copy: its process and time, nothing secret.
    var confirmation: StoredItem {
        StoredItem(
            value: SecretBytes(utf8: "\(process) \(AuditTrail.milliseconds(copied))"), created: copied)
    }

    /// The record as a file vault entry.
    var stored: StoredItem {
        var table = digests
        table[Self.header] = StoredItem(value: SecretBytes(utf8: process), created: copied)
        return StoredItem(value: VaultTable.encode(table), created: copied)
    }

    /// Whether `item` at `key` is what was recorded: the same value (by digest) and times.
    func holds(_ key: ItemKey, _ item: StoredItem) -> Bool {
        guard let recorded = digests[key] else { return false }
        return recorded.hasSameContent(as: Self.digested(item))
    }

    /// `item` with the BLAKE2b digest of its value in place of the value.
    private static func digested(_ item: StoredItem) -> StoredItem {
        StoredItem(
            value: SecretBytes(Sodium.hash(item.value, length: 32)), created: item.created, expires: item.expires)
    }
}

extension StoredItem {
    /// Whether `other` holds the same value and times, to the millisecond
    /// (the precision backends store times with).
    func hasSameContent(as other: StoredItem) -> Bool {
        func close(_ a: Date?, _ b: Date?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): abs(a.timeIntervalSince(b)) < 0.001
            default: false
            }
        }
        return value == other.value && close(created, other.created) && close(expires, other.expires)
    }
}
