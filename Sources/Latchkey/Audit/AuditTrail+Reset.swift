extension AuditTrail {
    /// Sets a broken trail aside and starts a new chain whose first entry,
    /// `audit.reset`, records what was found: for a trail whose anchor, key or
    /// tail is gone or damaged. The old trail and anchor file are renamed
    /// beside it (`.reset-<milliseconds>`), never deleted; a valid key is kept,
    /// a missing or damaged one replaced. An intact trail is left alone.
    /// - Returns: What was found and kept, or nil when the trail verified.
    /// - Throws: `LatchkeyError` when a file or the backend cannot be written.
    package func reset() throws -> AuditResetReport? {
        try reset(cause: nil)
    }

    /// ``reset()``, with `cause` (why the trail broke, when the caller knows) put before
    /// what verifying found in the `audit.reset` entry.
    func reset(cause: String?) throws -> AuditResetReport? {
        try namespace.prepare()
        return try PrivateFiles.withExclusiveLock(lockPath) {
            let verdict: AuditVerification
            do {
                verdict = try verify()
            } catch let error as LatchkeyError where error.code == .tampered {
                verdict = .broken(sequence: 1, reason: error.message)
            }
            guard case .broken(let sequence, let found) = verdict else { return nil }
            let reason = cause.map { "\($0): \(found)" } ?? found
            let stored: SecretBytes?
            do {
                stored = try storedKey(afresh: true)
            } catch let error as LatchkeyError where error.code == .tampered {
                stored = nil // a key of the wrong length is replaced; a store that cannot answer stops the reset
            }
            let anchored = try stored.flatMap { try readAnchor(key: $0).value?.sequence } ?? 0
            let suffix = ".reset-\(Self.milliseconds(clock()))"
            var kept: String?
            if try POSIX.status(of: path) != nil {
                try POSIX.rename(path, to: path + suffix)
                kept = path + suffix
            }
            if try POSIX.status(of: anchorFile.path) != nil {
                try POSIX.rename(anchorFile.path, to: anchorFile.path + suffix)
            }
            // A making cut short holds only a genesis anchor: nothing to keep.
            if try POSIX.status(of: makingAnchorFile.path) != nil { try POSIX.removeFile(makingAnchorFile.path) }
            try POSIX.syncDirectory(namespace.path)
            let key: SecretBytes
            if let stored {
                key = stored
            } else {
                key = SecretBytes.random(count: Sodium.genericHashKeyLength)
                try backend.write(StoredItem(value: key), for: keyItem)
                adopt(key: key)
            }
            let report = AuditResetReport(
                trailPath: path, keptSegment: kept, lastVerifiedSequence: sequence > 0 ? sequence - 1 : 0,
                reason: reason)
            // Numbering goes on after the highest number any kept segment or the old anchor holds, so
            // no sequence number of the namespace's trail is ever used twice.
            var highest = anchored
            for segment in try keptSegments() {
                for line in try readFile(segment).split(separator: 10) {
                    if let entry = try? AuditEntry(line: line, source: segment) {
                        highest = max(highest, entry.sequence)
                    }
                }
            }
            // A kept segment's lines are not vouched for: a forged number may push the count on (visibly),
            // never past what the next appends can still count up from.
            highest = min(highest, UInt64(Int64.max))
            // The entry first, then a new anchor file naming it (nil: no anchor yet), never deferred: the trail has no anchor until then.
            let file = try POSIX.File.open(path, .readAppendCreate(permissions: 0o600))
            let appender = Appender(
                trail: self, file: file, key: key, lastSequence: highest, previous: AuditEntry.genesisMAC,
                anchored: highest, anchorCounter: nil, deferral: nil)
            try appender.append(.auditReset, outcome: .ok, backend: backend.kind, detail: report.detail)
            return report
        }
    }
}

/// What resetting a broken audit trail found and kept.
public struct AuditResetReport: Sendable, Equatable, Codable {
    /// The trail that was reset; it now holds a new chain starting with `audit.reset`.
    public let trailPath: String
    /// Where the broken trail was kept, or nil when there was no trail file.
    public let keptSegment: String?
    /// The last sequence number of the old trail that verified (0 when none did).
    public let lastVerifiedSequence: UInt64
    /// Why the old trail did not verify.
    public let reason: String

    /// The `audit.reset` entry's detail: the kept segment's name, the last verified sequence and why, within the entry's limit.
    var detail: String {
        let kept = keptSegment.map { "kept " + PrivateFiles.baseName(of: $0) } ?? "no trail file was left"
        return AuditEntry.shortened("\(kept); last verified seq \(lastVerifiedSequence); \(reason)")
    }
}
