/// Checks a whole trail file against its key and anchor. Pure: it reads
/// nothing and writes nothing, so ``AuditTrail/verify()`` and trimming share it.
struct AuditChain {
    /// One parsed line and its bytes (without the newline).
    struct Line {
        let entry: AuditEntry
        let bytes: ArraySlice<UInt8>
    }

    let appID: AppID
    let path: String
    let key: SecretBytes
    /// The kind of store holding the key, for messages.
    let keyStore: BackendKind

    /// Splits `bytes` into lines, checks every entry's form, sequence and MAC,
    /// and the end against `anchor`.
    /// - Returns: The verdict, and the lines read (all of them when intact).
    func check(_ bytes: [UInt8], anchor: AuditAnchor?) -> (AuditVerification, [Line]) {
        var lines: [Line] = []
        var pieces = bytes.split(separator: 10, omittingEmptySubsequences: false)
        let incomplete = pieces.last.map { !$0.isEmpty } ?? false
        pieces.removeLast()
        var previous = AuditEntry.genesisMAC
        var expected: UInt64 = 1
        for (index, piece) in pieces.enumerated() {
            let source = "\(path) line \(index + 1)"
            let entry: AuditEntry
            do {
                entry = try AuditEntry(line: piece, source: source)
            } catch let error as LatchkeyError {
                return (.broken(sequence: expected, reason: error.message), lines)
            } catch {
                return (.broken(sequence: expected, reason: "\(source): unreadable"), lines)
            }
            let isCheckpoint = entry.event == .checkpoint || entry.continuesFrom != nil
            if index == 0 && isCheckpoint {
                guard entry.event == .checkpoint, let from = entry.continuesFrom.flatMap(Hex.decode) else {
                    return (
                        .broken(
                            sequence: entry.sequence,
                            reason: "\(source): a checkpoint needs both its event and continuesFrom"), lines
                    )
                }
                previous = from
                expected = entry.sequence
            } else if index == 0 && entry.event == .auditReset {
                // A reset's chain goes on from the numbers of the trail it kept aside (never reusing
                // one) and chains from chain(0); elsewhere an audit.reset is an ordinary entry.
                expected = entry.sequence
            } else if isCheckpoint {
                return (
                    .broken(sequence: expected, reason: "\(source): a checkpoint may only be the first line"), lines
                )
            } else if entry.sequence != expected {
                let reason =
                    index == 0
                    ? "\(source): the trail starts at seq \(entry.sequence) without a checkpoint: earlier entries were removed"
                    : "\(source): seq \(entry.sequence) where \(expected) was expected: entries were removed, inserted or reordered"
                return (.broken(sequence: expected, reason: reason), lines)
            }
            guard Hex.encode(entry.computeMAC(previous: previous, key: key, appID: appID)) == entry.mac else {
                return (
                    .broken(
                        sequence: entry.sequence,
                        reason:
                            "\(source): the MAC does not match: this entry was altered or forged, or the one before it was removed or replaced"
                    ), lines
                )
            }
            lines.append(Line(entry: entry, bytes: piece))
            previous = entry.chainValue
            expected = entry.sequence + 1
        }
        if incomplete {
            return (
                .broken(
                    sequence: expected,
                    reason:
                        "\(path) line \(pieces.count + 1): incomplete (no newline): a write was cut short or the file was altered"
                ), lines
            )
        }
        return (checkAnchor(anchor, lines: lines), lines)
    }

    private func checkAnchor(_ anchor: AuditAnchor?, lines: [Line]) -> AuditVerification {
        // The key is in the store (the caller read it): the trail was begun, and its anchor
        // was made with the key, so a missing or invalid anchor is never "no trail yet".
        guard let anchor else {
            return .broken(
                sequence: lines.last.map { $0.entry.sequence } ?? 1,
                reason:
                    "the anchor is missing or invalid although the audit key is in the \(keyStore) store, so the end of \(path) cannot be vouched for (a trail deleted or cut with its anchor)"
            )
        }
        guard let last = lines.last?.entry, let first = lines.first?.entry else {
            if anchor.sequence > 0 {
                return .broken(
                    sequence: 1, reason: "\(path) is empty or missing, but the anchor records seq \(anchor.sequence)")
            }
            guard anchor.following.contains(0) else { return torn(anchor, following: 0) }
            return .intact(entryCount: 0, lastSequence: 0)
        }
        if anchor.sequence > last.sequence {
            return .broken(
                sequence: last.sequence + 1,
                reason:
                    "\(path) ends at seq \(last.sequence) but the anchor records seq \(anchor.sequence): the last \(anchor.sequence - last.sequence) entries were cut"
            )
        }
        let anchored: [UInt8]
        if anchor.sequence == 0 && first.sequence == 1 && first.event != .checkpoint {
            anchored = AuditEntry.genesisMAC
        } else if let line = lines.first(where: {
            $0.entry.sequence == anchor.sequence && $0.entry.event != .checkpoint
        }) {
            anchored = Hex.decode(line.entry.mac) ?? []
        } else {
            return .broken(
                sequence: first.sequence,
                reason: "the anchor (seq \(anchor.sequence)) is older than the first entry of \(path)")
        }
        guard anchored == anchor.mac else {
            return .broken(
                sequence: anchor.sequence,
                reason: "entry \(anchor.sequence) does not match the anchor: the trail from there on was replaced")
        }
        // What follows the anchored entry is what a crash can leave (AuditAnchor.following);
        // the MACs of what follows were checked above, so it chains from the anchored entry.
        let following = last.sequence - anchor.sequence
        guard anchor.following.contains(following) else {
            if anchor.following == 0...1 {
                return .broken(
                    sequence: anchor.sequence + 2,
                    reason:
                        "\(path) goes on to seq \(last.sequence) but the anchor records seq \(anchor.sequence): the anchor was put back to an older copy"
                )
            }
            return torn(anchor, following: following)
        }
        return .intact(entryCount: lines.count, lastSequence: last.sequence)
    }

    /// The verdict on an anchor file with one slot torn or altered whose other slot is
    /// not followed by what a crash leaves (``AuditAnchor/following``).
    private func torn(_ anchor: AuditAnchor, following: UInt64) -> AuditVerification {
        .broken(
            sequence: anchor.sequence + 1,
            reason: AuditChain.tornReason(anchor, following: following, path: path))
    }

    /// Why an anchor file with one slot torn or altered does not match the trail: a crash tears
    /// the write naming the entry just appended, so the other slot is followed by exactly that entry.
    static func tornReason(_ anchor: AuditAnchor, following: UInt64, path: String) -> String {
        let expected = anchor.following.lowerBound
        return
            "one slot of the anchor file is torn or altered, and the other (seq \(anchor.sequence)) is followed by \(following) entr\(following == 1 ? "y" : "ies") of \(path), where a crash leaves \(expected): \(following < expected ? "the newest entry was cut" : "entries were added or the anchor put back")"
    }
}
