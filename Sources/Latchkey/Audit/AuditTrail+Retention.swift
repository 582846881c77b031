#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AuditTrail {
    /// How many bytes of the file's start are read to judge whether to trim:
    /// its first line is at most about 3.4 KB (a 512-byte `detail` escaped as `\u00XX`),
    /// so the start of the second is always inside.
    static let headWindow = 8 * 1024

    /// Trims the trail when it has outgrown ``retention``: more lines than
    /// `maxEntries` (trimmed to 90 % of it), or a first entry older than `maxAge`.
    /// The file is verified first (a broken trail is never trimmed, so no
    /// evidence is lost) and then replaced atomically by a checkpoint entry
    /// followed by the kept entries. Call it while holding the lock; `anchorFirst` runs
    /// just before a trim (which rewrites the file, so an append deferred to after the
    /// command's answer is anchored then instead), and must leave the anchor at `lastSequence`.
    /// - Throws: `.tampered` when the trail does not verify; file errors.
    func trimIfNeeded(
        file: POSIX.File, key: SecretBytes, lastSequence: UInt64, now: Date, anchorFirst: () throws -> Void
    ) throws {
        guard retention.maxEntries != nil || retention.maxAge != nil else { return }
        // Only the start of the first two lines is read (``AuditEntry/head(of:)``); a line
        // that does not start as Latchkey writes it is parsed whole, which says what is wrong.
        let heads = try file.read(upTo: Self.headWindow, at: 0).split(separator: 10, maxSplits: 2).prefix(2).map {
            line in
            if let head = AuditEntry.head(of: line) { return head }
            let entry = try AuditEntry(line: line, source: path)
            return (entry.sequence, entry.milliseconds, entry.event == .checkpoint)
        }
        guard let first = heads.first else { return }
        let oldest = first.isCheckpoint ? heads.dropFirst().first : first
        let nowMilliseconds = Self.milliseconds(now)
        let cutoff = retention.maxAge.map { nowMilliseconds - Int64($0 * 1_000) }
        let tooMany = retention.maxEntries.map { lastSequence - first.sequence + 1 > UInt64($0) } ?? false
        let tooOld = cutoff.map { cutoff in oldest.map { $0.milliseconds < cutoff } ?? false } ?? false
        guard tooMany || tooOld else { return }
        try anchorFirst()

        let (verdict, lines) = AuditChain(appID: appID, path: path, key: key, keyStore: backend.kind).check(
            try file.readAll(limit: Self.maximumFileLength, what: "an audit trail"),
            anchor: try readAnchor(key: key).value)
        if case .broken(let sequence, let reason) = verdict {
            throw LatchkeyError(
                .tampered, "not trimming \(path), which fails verification at seq \(sequence): \(reason)")
        }
        let entries = lines.first?.entry.event == .checkpoint ? Array(lines.dropFirst()) : lines
        var keepFrom =
            cutoff.map { cutoff in entries.firstIndex { $0.entry.milliseconds >= cutoff } ?? entries.count } ?? 0
        if let maxEntries = retention.maxEntries {
            let target = maxEntries - max(1, maxEntries / 10) // lines kept, the checkpoint included
            keepFrom = max(keepFrom, entries.count - (target - 1))
        }
        keepFrom = min(keepFrom, entries.count - 1) // the last entry, which the anchor names, always stays
        guard keepFrom > 0 else { return }

        let continued = entries[keepFrom - 1].entry.chainValue
        let checkpoint = AuditEntry(
            sequence: entries[keepFrom].entry.sequence - 1, milliseconds: nowMilliseconds, event: .checkpoint,
            outcome: .ok,
            backend: backend.kind, account: nil,
            detail: "retention dropped seq \(entries[0].entry.sequence)-\(entries[keepFrom - 1].entry.sequence)",
            continuesFrom: Hex.encode(continued), mac: "")
        var bytes = Array(
            (checkpoint.withMAC(checkpoint.computeMAC(previous: continued, key: key, appID: appID)).jsonLine + "\n")
                .utf8)
        for line in entries[keepFrom...] {
            bytes += line.bytes
            bytes.append(10)
        }
        try PrivateFiles.replace(path, with: bytes)
    }
}
