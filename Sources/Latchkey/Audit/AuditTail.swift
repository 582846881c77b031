/// The end of a trail file, read before an append: where the chain continues,
/// checked against the anchor so that an append never hides a cut tail or an
/// altered last entry.
struct AuditTail {
    let file: POSIX.File
    let path: String
    let appID: AppID
    let key: SecretBytes

    /// How much of the file's end is read at most; far more than the few lines
    /// a crash can leave after the anchor.
    static let window = 64 * 1024
    /// How much is read first: the last two lines, whose `detail` is capped at
    /// 512 bytes, fit with room to spare (an append used to read all of ``window``).
    static let firstWindow = 4 * 1024

    /// The last sequence number and the MAC the next entry chains from.
    ///
    /// A partial last line (a write cut short by a crash, never acknowledged)
    /// is truncated away first. Call it while holding the lock.
    /// - Throws: `.tampered` when the end does not match `anchor`; file errors.
    func continuation(anchor: AuditAnchor?) throws -> (sequence: UInt64, mac: [UInt8]) {
        do {
            return try continuation(anchor: anchor, window: Self.firstWindow)
        } catch is NarrowWindow {
            return try continuation(anchor: anchor, window: Self.window)
        }
    }

    /// What the first window held did not settle it: the lines that do may lie further back.
    private struct NarrowWindow: Error {}

    private func continuation(anchor: AuditAnchor?, window: Int) throws -> (sequence: UInt64, mac: [UInt8]) {
        var (start, chunk) = try readEnd(window)
        func tampered(_ what: String) -> any Error {
            start > 0 && window < Self.window ? NarrowWindow() : self.tampered(what)
        }
        if let last = chunk.last, last != 10 {
            guard let newline = chunk.lastIndex(of: 10) ?? (start == 0 ? -1 : nil) else {
                throw tampered("its last line is longer than \(window) bytes")
            }
            try file.truncate(to: start + newline + 1)
            try file.sync()
            (start, chunk) = try readEnd(window)
        }
        // The key is in the store (the caller holds it), so the anchor was made: without one the
        // trail cannot be vouched for, empty or not.
        guard let anchor else { throw tampered("the anchor is missing or invalid") }
        guard !chunk.isEmpty else {
            guard anchor.sequence == 0 else {
                throw tampered("it is empty but the anchor records seq \(anchor.sequence)")
            }
            guard anchor.following.contains(0) else {
                throw tampered(AuditChain.tornReason(anchor, following: 0, path: path))
            }
            return (0, AuditEntry.genesisMAC)
        }
        // The usual end: the last line is the anchored entry. Its sequence number and MAC, read
        // where Latchkey writes them, settle that without parsing the line (as below, an
        // append does not recompute the anchored entry's MAC; `audit verify` does).
        let newlineBefore = chunk.dropLast().lastIndex(of: 10)
        if anchor.sequence > 0, anchor.following.contains(0), newlineBefore != nil || start == 0 {
            let lastLine = chunk[((newlineBefore ?? -1) + 1)..<(chunk.count - 1)]
            if let head = AuditEntry.head(of: lastLine), !head.isCheckpoint, head.sequence == anchor.sequence,
                AuditEntry.trailingMAC(of: lastLine) == anchor.mac
            {
                return (anchor.sequence, anchor.mac)
            }
        }
        // Parse from the end back to the anchored entry only (usually the last line), finding
        // each line from the end rather than splitting the whole window.
        var entries: [AuditEntry] = []
        var lineEnd = chunk.count
        while lineEnd > 0 {
            let lineStart = chunk[..<lineEnd].lastIndex(of: 10).map { $0 + 1 } ?? 0
            if lineStart == 0 && start > 0 { break } // the window may begin mid-line
            if lineStart < lineEnd {
                let entry = try AuditEntry(line: chunk[lineStart..<lineEnd], source: path)
                entries.insert(entry, at: 0)
                if entry.sequence <= anchor.sequence { break }
            }
            lineEnd = lineStart - 1
        }
        guard let last = entries.last, let first = entries.first, anchor.sequence <= last.sequence else {
            throw tampered(
                "it ends at seq \(entries.last?.sequence ?? 0) but the anchor records seq \(anchor.sequence)")
        }
        var previous: [UInt8]
        var rest: ArraySlice<AuditEntry>
        if anchor.sequence == 0, start == 0, first.sequence == 1, first.event != .checkpoint {
            previous = AuditEntry.genesisMAC
            rest = entries[...]
        } else if let index = entries.firstIndex(where: { $0.sequence == anchor.sequence && $0.event != .checkpoint }) {
            guard Hex.decode(entries[index].mac) == anchor.mac else {
                throw tampered("entry \(anchor.sequence) does not match the anchor")
            }
            previous = entries[index].chainValue
            rest = entries[(index + 1)...]
        } else {
            throw tampered("entry \(anchor.sequence), which the anchor records, is not among its last lines")
        }
        // A crash between an append and its anchor write leaves one entry past the anchor, never
        // more; with one slot torn, exactly that one (AuditAnchor.following).
        guard anchor.following.contains(UInt64(rest.count)) else {
            if anchor.following == 0...1 {
                throw tampered(
                    "it goes on to seq \(last.sequence) but the anchor records seq \(anchor.sequence), so the anchor was put back to an older copy"
                )
            }
            throw tampered(AuditChain.tornReason(anchor, following: UInt64(rest.count), path: path))
        }
        var expected = anchor.sequence + 1
        for entry in rest {
            guard entry.sequence == expected, entry.event != .checkpoint,
                Hex.encode(entry.computeMAC(previous: previous, key: key, appID: appID)) == entry.mac
            else {
                throw tampered("entry \(entry.sequence) after the anchor does not verify")
            }
            previous = entry.chainValue
            expected += 1
        }
        return (last.sequence, previous)
    }

    private func readEnd(_ window: Int) throws -> (start: Int, bytes: [UInt8]) {
        let size = try file.status().size
        let start = max(0, size - window)
        return (start, try file.read(upTo: size - start, at: start))
    }

    private func tampered(_ what: String) -> LatchkeyError {
        LatchkeyError(.tampered, "\(path) does not match its anchor: \(what); not appending; \(AuditTrail.resetAdvice)")
    }
}
