import Foundation
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@testable import Latchkey

@Suite("Audit trail tampering and concurrency", .sandboxed)
struct AuditTamperTests {
    /// A trail of 60 varied entries, with every outcome, with and without account and detail.
    static func makeTrail() throws -> AuditTrail {
        let trail = AuditTrail(
            appID: try AppID("com.example.tamper"), directory: try freshDirectory(), backend: InMemoryBackend())
        let events: [AuditEvent] = [
            .usernameRemembered, .sessionSaved, .sessionRead, .logout, .backendFallback, .sessionExpired,
        ]
        let outcomes: [AuditOutcome] = [.ok, .skipped, .denied, .failed(.timedOut)]
        for index in 0..<60 {
            try trail.record(
                events[index % events.count], outcome: outcomes[index % outcomes.count], backend: .memory,
                account: index % 3 == 0 ? nil : "user\(index % 5)@example.com",
                detail: index % 2 == 0 ? "item access #\(index)" : nil)
        }
        return trail
    }

    /// One edit per field of `entry`: (the field's text in the line, the altered text).
    static func fieldEdits(_ entry: AuditEntry) -> [(String, String)] {
        func flipLast(_ hex: String) -> String { String(hex.dropLast()) + (hex.last == "0" ? "1" : "0") }
        var edits = [
            ("\"seq\":\(entry.sequence),", "\"seq\":\(entry.sequence + 1),"),
            (
                "\"time\":\"\(entry.timeText)\"",
                "\"time\":\"\(UTCTimestamp.format(milliseconds: entry.milliseconds + 1))\""
            ),
            ("\"event\":\"\(entry.event)\"", "\"event\":\"\(entry.event == .wipe ? "logout" : "wipe")\""),
            ("\"backend\":\"memory\"", "\"backend\":\"file\""),
            ("\"mac\":\"\(entry.mac)\"", "\"mac\":\"\(flipLast(entry.mac))\""),
        ]
        switch entry.outcome {
        case .failed(let code): edits.append(("\"error\":\"\(code)\"", "\"error\":\"io\""))
        case .ok: edits.append(("\"outcome\":\"ok\"", "\"outcome\":\"skipped\""))
        case .skipped: edits.append(("\"outcome\":\"skipped\"", "\"outcome\":\"denied\""))
        case .denied: edits.append(("\"outcome\":\"denied\"", "\"outcome\":\"ok\""))
        }
        if let account = entry.account {
            edits.append(("\"account\":\"\(account)\"", "\"account\":\"\(flipLast(account))\""))
        }
        if let detail = entry.detail { edits.append(("\"detail\":\"\(detail)\"", "\"detail\":\"\(detail)!\"")) }
        return edits
    }

    @Test(
        "editing any field of any entry, deleting, swapping any two, inserting a forged entry and cutting the tail are each detected"
    )
    func tamperingIsDetected() throws {
        let trail = try Self.makeTrail()
        let original = try POSIX.File.open(trail.path, .read).readAll()
        let lines = original.split(separator: 10).map { String(decoding: $0, as: UTF8.self) }
        #expect(try trail.verify() == .intact(entryCount: 60, lastSequence: 60))
        let entries = try trail.entries()

        func detected(_ altered: [String]) throws -> Bool {
            try overwrite(trail.path, with: Array(altered.map { $0 + "\n" }.joined().utf8))
            return try !trail.verify().isIntact
        }
        var tally: [String: (detected: Int, total: Int)] = [:]
        func count(_ kind: String, _ wasDetected: Bool) {
            let current = tally[kind] ?? (0, 0)
            tally[kind] = (current.detected + (wasDetected ? 1 : 0), current.total + 1)
        }

        for (index, entry) in entries.enumerated() {
            for (old, new) in Self.fieldEdits(entry) {
                #expect(lines[index].contains(old), "line \(index + 1) lacks \(old)")
                var altered = lines
                altered[index] = altered[index].replacing(old, with: new)
                count("field edits", try detected(altered))
            }
            var deleted = lines
            deleted.remove(at: index)
            count("deletions", try detected(deleted))
        }
        for first in lines.indices {
            for second in lines.indices where second > first {
                var swapped = lines
                swapped.swapAt(first, second)
                count("swaps", try detected(swapped))
            }
        }
        for position in 0...lines.count {
            let forged = AuditEntry(
                sequence: UInt64(position + 1), milliseconds: entries[min(position, 59)].milliseconds,
                event: .sessionRead, outcome: .ok, backend: .memory, account: nil, detail: "forged",
                continuesFrom: nil, mac: Hex.encode(Sodium.randomBytes(count: 32)))
            var inserted = lines
            inserted.insert(forged.jsonLine, at: position)
            count("insertions", try detected(inserted))
        }
        for cut in 1...5 {
            count("cut tails", try detected(Array(lines.dropLast(cut))))
        }

        try overwrite(trail.path, with: original)
        #expect(try trail.verify() == .intact(entryCount: 60, lastSequence: 60))
        for kind in ["field edits", "deletions", "swaps", "insertions", "cut tails"] {
            let (found, total) = tally[kind] ?? (0, 0)
            print("audit tamper detection, 60-entry trail: \(kind) detected \(found) of \(total)")
            #expect(found == total && total > 0, "\(kind): \(found) of \(total) detected")
        }
    }

    @Test("verifying twice gives the same answer and changes neither the file nor the anchor")
    func verifyIsReadOnly() throws {
        let trail = try Self.makeTrail()
        for alter in [false, true] {
            if alter {
                var lines = try POSIX.File.open(trail.path, .read).readAll().split(separator: 10)
                lines.remove(at: 10)
                try overwrite(trail.path, with: Array(lines.joined(separator: [10])) + [10])
            }
            let bytes = try POSIX.File.open(trail.path, .read).readAll()
            let status = try POSIX.status(of: trail.path)
            let anchor = try fileBytes(trail.anchorFile.path)
            let first = try trail.verify()
            let second = try trail.verify()
            #expect(first == second && first.isIntact == !alter)
            if case .broken(let a, let reasonA) = first, case .broken(let b, let reasonB) = second {
                #expect(a == b && reasonA == reasonB && a == 11)
            }
            #expect(try POSIX.File.open(trail.path, .read).readAll() == bytes)
            #expect(try POSIX.status(of: trail.path) == status)
            #expect(try fileBytes(trail.anchorFile.path) == anchor)
        }
    }

    @Test("writers in many tasks of one process never interleave and the chain verifies")
    func concurrentTasks() async throws {
        let trail = AuditTrail(
            appID: try AppID("com.example.tasks"), directory: try freshDirectory(), backend: InMemoryBackend())
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for index in 0..<50 {
                        try trail.record(
                            .sessionRead, outcome: .ok, backend: .memory, account: "task\(task)", detail: "\(index)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "audit appends (fsync'd, 4 tasks, InMemoryBackend): 200 entries in \(String(format: "%.2f", seconds)) s = \(Int(200 / seconds)) entries/s"
        )
        #expect(try trail.verify() == .intact(entryCount: 200, lastSequence: 200))
    }

    @Test("two processes appending at once never interleave partial lines, and the chain verifies")
    func twoProcesses() throws {
        let directory = try freshDirectory()
        let appID = try AppID("com.example.processes")
        // Both processes write to one key-file vault, which also holds the trail's key and anchor.
        let writers = try ["alpha", "beta"].map { tag in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try testHelperPath())
            process.arguments = ["write-many-audited", directory, appID.rawValue, tag, "150"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }
        let trail = AuditTrail(
            appID: appID, directory: directory,
            backend: EncryptedFileBackend(appID: appID, directory: directory, keySource: .keyFile))
        #expect(try trail.verify() == .intact(entryCount: 300, lastSequence: 300))

        let bytes = try POSIX.File.open(trail.path, .read).readAll()
        #expect(bytes.last == 10)
        let lines = bytes.split(separator: 10, omittingEmptySubsequences: false).dropLast()
        let entries = try lines.enumerated().map { try AuditEntry(line: $0.element, source: "line \($0.offset + 1)") }
        #expect(entries.map(\.sequence) == Array(1...300))
        for tag in ["alpha", "beta"] {
            let details = entries.compactMap(\.detail).filter { $0.hasPrefix(tag + " ") }
            #expect(details == (0..<150).map { "\(tag) \($0)" }, "each writer's entries appear whole and in its order")
        }
        #expect(Set(entries.compactMap(\.account)).count == 2)
        let switches = zip(entries, entries.dropFirst()).filter { $0.account != $1.account }.count
        print("audit two-process append: 300 entries, the writer changed \(switches) times along the trail")
        #expect(switches > 1, "the two writers did not overlap, so the test showed nothing about concurrent appends")
    }
}
