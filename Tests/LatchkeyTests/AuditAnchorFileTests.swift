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
}
