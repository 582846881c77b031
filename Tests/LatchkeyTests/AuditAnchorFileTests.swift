import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@testable import Latchkey

@Suite("Audit anchor file", .sandboxed)
struct AuditAnchorFileTests {
    let appID = try! AppID("com.example.anchor")

    /// A trail with `count` entries on an in-memory store.
    func trail(entries count: Int) throws -> AuditTrail {
        let trail = AuditTrail(appID: appID, directory: try freshDirectory() + "/store", backend: InMemoryBackend())
        for _ in 0..<count { try trail.record(.sessionRead, outcome: .ok, backend: .memory) }
        return trail
    }

    /// The first bad sequence number and the reason when `trail` does not verify; nil (an issue recorded) when it does.
    func brokenVerdict(_ trail: AuditTrail) throws -> (sequence: UInt64, reason: String)? {
        guard case .broken(let sequence, let reason) = try trail.verify() else {
            Issue.record("the damage went unseen")
            return nil
        }
        return (sequence, reason)
    }

    /// What another process, with nothing read yet, meets appending to `trail`: it must be refused.
    func refusedAppend(_ trail: AuditTrail) -> (AuditTrail, LatchkeyError?) {
        let nextProcess = AuditTrail(appID: appID, directory: trail.directory, backend: trail.backend)
        let refused = #expect(throws: LatchkeyError.self) {
            try nextProcess.record(.wipe, outcome: .ok, backend: .memory)
        }
        #expect(refused?.code == .tampered, "\(refused?.message ?? "")")
        return (nextProcess, refused)
    }

    @Test("the two slots are written alternately and the newest valid one wins")
    func alternatingSlots() throws {
        let trail = try trail(entries: 3)
        let bytes = try fileBytes(trail.anchorFile.path)
        #expect(bytes.count == 2 * AuditAnchorFile.slotSize)
        let key = try #require(try trail.storedKey())
        guard case .anchor(let anchor, let counter) = try trail.anchorFile.read(key: key) else {
            Issue.record("no valid anchor")
            return
        }
        #expect(anchor.sequence == 3 && counter == 4, "genesis, then one write per entry")
        // The other slot holds the previous anchor, seq 2.
        var older = bytes
        for index in (Int(counter % 2) * AuditAnchorFile.slotSize)..<(Int(counter % 2) * AuditAnchorFile.slotSize + 8) {
            older[index] = 0
        }
        try overwrite(trail.anchorFile.path, with: older)
        guard case .anchor(let previous, _) = try trail.anchorFile.read(key: key) else {
            Issue.record("the older slot is not valid")
            return
        }
        #expect(previous.sequence == 2)
    }

    @Test(
        "a slot write torn by a crash, or a crash before the anchor write, leaves a trail that verifies and appends continue",
        arguments: [0, 1, 57, 100, 127])
    func tornSlot(tornBytes: Int) throws {
        let trail = try trail(entries: 4)
        let key = try #require(try trail.storedKey())
        guard case .anchor(_, let counter) = try trail.anchorFile.read(key: key) else {
            Issue.record("no valid anchor")
            return
        }
        // The next write goes to the other slot; tear it: its first bytes new, the rest garbage.
        try trail.record(.sessionSaved, outcome: .ok, backend: .memory)
        var bytes = try fileBytes(trail.anchorFile.path)
        let slot = Int((counter + 1) % 2) * AuditAnchorFile.slotSize
        for index in (slot + tornBytes)..<(slot + AuditAnchorFile.slotSize) { bytes[index] = 0xA5 }
        try overwrite(trail.anchorFile.path, with: bytes)
        #expect(try trail.verify() == .intact(entryCount: 5, lastSequence: 5))
        try trail.record(.logout, outcome: .ok, backend: .memory)
        #expect(try trail.verify() == .intact(entryCount: 6, lastSequence: 6))
    }

    @Test(
        "an anchor file deleted, emptied, forged or rolled back alone is detected",
        arguments: ["deleted", "emptied", "forged", "rolled back"])
    func anchorAloneAltered(change: String) throws {
        let trail = try trail(entries: 2)
        let early = try fileBytes(trail.anchorFile.path)
        for _ in 0..<3 { try trail.record(.sessionRead, outcome: .ok, backend: .memory) }
        #expect(try trail.verify().isIntact)
        switch change {
        case "deleted": try POSIX.removeFile(trail.anchorFile.path)
        case "emptied": try overwrite(trail.anchorFile.path, with: [])
        case "forged":
            var bytes = try fileBytes(trail.anchorFile.path)
            for slot in 0..<2 { bytes[slot * AuditAnchorFile.slotSize + 23] ^= 1 } // the sequence's low byte
            try overwrite(trail.anchorFile.path, with: bytes)
        default: try overwrite(trail.anchorFile.path, with: early)
        }
        #expect(try !trail.verify().isIntact, "\(change)")
        let nextProcess = AuditTrail(appID: appID, directory: trail.directory, backend: trail.backend)
        let refused = #expect(throws: LatchkeyError.self) {
            try nextProcess.record(.wipe, outcome: .ok, backend: .memory)
        }
        #expect(refused?.code == .tampered)
        #expect(refused?.message.contains("Vault.resetAuditTrail()") == true)
    }

    @Test(
        "an anchor rolled back further than an append's first read of the tail reaches is still told apart, by the whole window"
    )
    func anchorRolledBackFar() throws {
        let trail = try trail(entries: 2)
        let early = try fileBytes(trail.anchorFile.path)
        for _ in 0..<40 {
            try trail.record(.sessionRead, outcome: .ok, backend: .memory, detail: String(repeating: "d", count: 200))
        }
        #expect(try fileBytes(trail.path).count > AuditTail.firstWindow * 2)
        try overwrite(trail.anchorFile.path, with: early)
        let nextProcess = AuditTrail(appID: appID, directory: trail.directory, backend: trail.backend)
        let refused = #expect(throws: LatchkeyError.self) {
            try nextProcess.record(.wipe, outcome: .ok, backend: .memory)
        }
        #expect(refused?.code == .tampered)
        #expect(
            refused?.message.contains("goes on to seq 42 but the anchor records seq 2") == true,
            "\(refused?.message ?? "")")
    }

    @Test(
        "the newest entry cut and the newest slot torn is broken, not a crash: the next append refuses rather than reuse the number"
    )
    func cutAndTear() throws {
        let trail = try trail(entries: 5)
        let key = try #require(try trail.storedKey())
        guard case .anchor(let anchor, let counter) = try trail.anchorFile.read(key: key) else {
            Issue.record("no valid anchor")
            return
        }
        #expect(anchor.sequence == 5)
        var slots = try fileBytes(trail.anchorFile.path)
        slots[Int(counter % 2) * AuditAnchorFile.slotSize + 30] ^= 1 // a byte of the newest slot's MAC
        try overwrite(trail.anchorFile.path, with: slots)
        let lines = try fileBytes(trail.path).split(separator: 10)
        try overwrite(trail.path, with: Array(lines.dropLast().joined(separator: [10])) + [10])

        let verdict = try brokenVerdict(trail)
        #expect(verdict?.sequence == 5 && verdict?.reason.contains("torn") == true, "\(verdict?.reason ?? "")")
        let (nextProcess, _) = refusedAppend(trail)
        #expect(try nextProcess.entries().last?.sequence == 4, "seq 5 is not used again")
    }

    @Test("one slot torn and more than the one entry a crash leaves after the other is broken")
    func tornAndTwoAfter() throws {
        let trail = try trail(entries: 3)
        let early = try fileBytes(trail.anchorFile.path)
        for _ in 0..<2 { try trail.record(.sessionRead, outcome: .ok, backend: .memory) }
        // The copy from seq 3 put back with its newest slot torn: the older one names seq 2.
        var slots = early
        let key = try #require(try trail.storedKey())
        try overwrite(trail.anchorFile.path, with: early)
        guard case .anchor(_, let counter) = try trail.anchorFile.read(key: key) else {
            Issue.record("no valid anchor")
            return
        }
        slots[Int(counter % 2) * AuditAnchorFile.slotSize + 3] ^= 0xFF
        try overwrite(trail.anchorFile.path, with: slots)
        #expect(try brokenVerdict(trail) != nil)
        _ = refusedAppend(trail)
    }

    @Test("the trail and its anchor deleted together while the trail key is in the store is broken, not empty")
    func deletedPairWithKey() throws {
        let trail = try trail(entries: 3)
        try POSIX.removeFile(trail.path)
        try POSIX.removeFile(trail.anchorFile.path)
        let verdict = try brokenVerdict(trail)
        #expect(verdict?.sequence == 1 && verdict?.reason.contains("key") == true, "\(verdict?.reason ?? "")")
        let (nextProcess, _) = refusedAppend(trail)
        #expect(try nextProcess.entries().isEmpty, "numbering did not restart at 1")
    }

    @Test("a key with a genesis anchor and no entry yet (a pseudonym was asked for) is an empty trail, intact")
    func keyAndGenesisOnly() throws {
        let trail = AuditTrail(appID: appID, directory: try freshDirectory() + "/store", backend: InMemoryBackend())
        _ = try trail.pseudonym(for: "alice")
        #expect(try trail.verify() == .intact(entryCount: 0, lastSequence: 0))
        try trail.record(.sessionRead, outcome: .ok, backend: .memory)
        #expect(try trail.verify() == .intact(entryCount: 1, lastSequence: 1))
    }

    @Test(
        "without the key, a segment an earlier reset kept shows a trail existed: the trail deleted with its anchor is broken"
    )
    func keptSegmentIsASign() throws {
        let trail = try trail(entries: 2)
        try POSIX.removeFile(trail.anchorFile.path)
        #expect(try trail.reset() != nil)
        try trail.record(.sessionRead, outcome: .ok, backend: .memory)
        try trail.backend.delete(trail.keyItem)
        try POSIX.removeFile(trail.path)
        try POSIX.removeFile(trail.anchorFile.path)
        let verdict = try brokenVerdict(trail)
        #expect(verdict?.reason.contains("a reset kept") == true, "\(verdict?.reason ?? "")")
    }
}
