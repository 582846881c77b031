#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Vault {
    #if LATCHKEY_TEST_SEAMS
        /// A test seam (debug builds only): called after each migration step with the
        /// step's number (1 for the first item copied and verified, then one per item,
        /// then the file vault's destruction), so tests can kill the process at every step.
        @TaskLocal package static var migrationStepObserver: (@Sendable (Int) -> Void)?
    #endif

    /// Tells the test seam, in debug builds, that migration step `step` is done.
    private static func migrationStepDone(_ step: Int) {
        #if LATCHKEY_TEST_SEAMS
            migrationStepObserver?(step)
        #endif
    }

    /// Moves every item of a leftover encrypted file vault into the Secret
    /// Service, verifies each by reading it back, and only then destroys the
    /// file vault and its key. A crash at any point loses nothing: the file
    /// vault stays until every item is verified in the Secret Service, and
    /// running it again finishes the job. An item the Secret Service already
    /// holds in a newer version is kept.
    /// - Returns: What was moved.
    /// - Throws: `LatchkeyError` `.unavailable` when the Secret Service is not
    ///   the store in use; `.wrongKey` when the file vault needs a passphrase;
    ///   `.internal` when an item does not read back as written; store errors.
    @discardableResult
    public func migrate() throws -> MigrationReport {
        guard backend.kind == .secretService else {
            throw LatchkeyError(
                .unavailable,
                "the Secret Service is not the store in use (\(selectionReason)), so there is nothing to migrate into")
        }
        guard try fileVaultExists() else { return MigrationReport() }
        guard let fileVault else {
            throw LatchkeyError(.wrongKey, "the encrypted vault of \(appID) needs its passphrase to be migrated")
        }
        return try perform(.migrate) { changes in
            var report = MigrationReport()
            var step = 0
            for key in try fileVault.list(kind: nil) {
                guard let item = try fileVault.read(key) else { continue }
                if let existing = try backend.read(key), existing.created > item.created {
                    report.keptNewer += 1
                } else {
                    try changes.willChange(key, in: backend)
                    try backend.write(item, for: key)
                    guard let copy = try backend.read(key), copy.hasSameContent(as: item) else {
                        throw LatchkeyError(
                            .internal,
                            "an item did not read back from the Secret Service as written; the file vault is kept")
                    }
                    report.moved += 1
                }
                step += 1
                Vault.migrationStepDone(step)
            }
            try changes.willChangeEverything(in: fileVault)
            try fileVault.deleteAll()
            report.destroyedFileVault = true
            Vault.migrationStepDone(step + 1)
            return OperationOutcome(report, detail: report.summary)
        }
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
