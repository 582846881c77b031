import Glibc
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let now = Mutex(Date(timeIntervalSince1970: 1_750_000_000))
    func read() -> Date { now.withLock { $0 } }
    func advance(by seconds: TimeInterval) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("Audit trail", .sandboxed)
struct AuditTrailTests {
    let appID = try! AppID("com.example.audit")

    @Test(
        "entries are JSON lines with a pseudonym, never the account; 0600 file in a 0700 directory; key and anchor only in the backend"
    )
    func writesPrivateLines() throws {
        let directory = try freshDirectory() + "/store"
        let backend = InMemoryBackend()
        let trail = AuditTrail(appID: appID, directory: directory, backend: backend)
        try trail.record(.usernameRemembered, outcome: .ok, backend: .secretService, account: "alice@example.com")
        try trail.record(
            .sessionSaved, outcome: .ok, backend: .secretService, account: "alice@example.com", detail: "access")
        try trail.record(.sessionRead, outcome: .failed(.timedOut), backend: .secretService, account: "bob")
        let text = String(decoding: try POSIX.File.open(trail.path, .read).readAll(), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3 && text.hasSuffix("\n"))
        #expect(!text.contains("alice") && !text.contains("bob"))
        let alice = try trail.pseudonym(for: "alice@example.com")
        let bob = try trail.pseudonym(for: "bob")
        #expect(alice.count == 16 && alice != bob)
        let entries = try trail.entries()
        #expect(entries.map(\.sequence) == [1, 2, 3])
        #expect(entries[0].account == alice && entries[1].account == alice && entries[1].detail == "access")
        #expect(
            entries[2].outcome == .failed(.timedOut) && lines[2].contains(#""outcome":"failed","error":"timedOut""#))
        #expect(try trail.entries(since: 2).map(\.sequence) == [3])
        #expect(try POSIX.status(of: trail.path)?.permissions == 0o600)
        #expect(try POSIX.status(of: directory)?.permissions == 0o700)
        #expect(try POSIX.directoryEntries(directory) == ["com.example.audit.d"])
        #expect(
            try POSIX.directoryEntries(trail.namespace.path).sorted() == [
                "audit.memory.anchor", "audit.memory.jsonl", "audit.memory.lock",
            ])
        #expect(try POSIX.status(of: trail.anchorFile.path)?.permissions == 0o600)
        #expect(try backend.list(kind: nil) == [trail.keyItem], "the anchor lives beside the trail, not in the store")
        #expect(try trail.verify() == .intact(entryCount: 3, lastSequence: 3))

        let reopened = AuditTrail(appID: appID, directory: directory, backend: backend)
        #expect(try reopened.pseudonym(for: "alice@example.com") == alice)
        let elsewhere = AuditTrail(
            appID: try AppID("com.example.other"), directory: directory, backend: InMemoryBackend())
        #expect(try elsewhere.pseudonym(for: "alice@example.com") != alice)
    }

    @Test("a line has exactly the documented form")
    func lineFormat() throws {
        let entry = AuditEntry(
            sequence: 7, milliseconds: 1_750_000_000_123, event: .logout, outcome: .ok, backend: .file,
            account: "0123456789abcdef", detail: "wiped 2 sessions: access, \"refresh\"\n", continuesFrom: nil,
            mac: String(repeating: "ab", count: 32))
        #expect(
            entry.jsonLine
                == #"{"seq":7,"time":"2025-06-15T15:06:40.123Z","event":"logout","outcome":"ok","backend":"file","account":"0123456789abcdef","detail":"wiped 2 sessions: access, \"refresh\"\n","mac":"\#(String(repeating: "ab", count: 32))"}"#
        )
        #expect(try AuditEntry(line: Array(entry.jsonLine.utf8), source: "t") == entry)
        let spaced = entry.jsonLine.replacing(",\"event\"", with: ", \"event\"")
        #expect(throws: LatchkeyError(.tampered, "")) { try AuditEntry(line: Array(spaced.utf8), source: "t") }
    }

    @Test(
        "the start and the MAC of a line, read alone (to judge trimming, to continue the chain), agree with the whole line, and nothing else passes"
    )
    func lineHead() throws {
        let mac = String(repeating: "ab", count: 32)
        for entry in [
            AuditEntry(
                sequence: 7, milliseconds: 1_750_000_000_123, event: .logout, outcome: .ok, backend: .file,
                account: "0123456789abcdef", detail: "wiped 2 sessions", continuesFrom: nil, mac: mac),
            AuditEntry(
                sequence: 12_345_678_901, milliseconds: 0, event: .checkpoint, outcome: .ok, backend: .secretService,
                account: nil, detail: "retention dropped seq 1-9", continuesFrom: mac, mac: mac),
            AuditEntry(
                sequence: 1, milliseconds: 1_750_000_000_000, event: AuditEvent(rawValue: "audit.checkpoints"),
                outcome: .ok,
                backend: .memory, account: nil, detail: nil, continuesFrom: nil, mac: mac),
        ] {
            let line = Array(entry.jsonLine.utf8)
            let head = try #require(AuditEntry.head(of: line))
            #expect(head.sequence == entry.sequence && head.milliseconds == entry.milliseconds)
            #expect(head.isCheckpoint == (entry.event == .checkpoint))
            #expect(AuditEntry.trailingMAC(of: line) == Hex.decode(entry.mac))
            #expect(
                AuditEntry.trailingMAC(of: line.dropLast()) == nil && AuditEntry.trailingMAC(of: line + [32]) == nil)
        }
        #expect(
            AuditEntry.trailingMAC(of: Array(#"{"seq":1,"mac":"\#(String(repeating: "zz", count: 32))"}"#.utf8)) == nil)
        for line in [
            #"{"seq": 7,"time":"2025-06-15T15:06:40.123Z","event":"logout"}"#,
            #"{"time":"2025-06-15T15:06:40.123Z","seq":7}"#,
            #"{"seq":7,"time":"2025-06-15 15:06:40.123Z","event":"logout"}"#,
            #"{"seq":-7,"time":"2025-06-15T15:06:40.123Z","event":"x"}"#,
            #"{"seq":99999999999999999999,"time":"2025-06-15T15:06:40.123Z","event":"x"}"#,
            #"{"seq":7,"time":"2025-06-15T15:06:40.123Z""#, "",
        ] {
            #expect(AuditEntry.head(of: Array(line.utf8)) == nil, "\(line)")
        }
    }

    @Test(
        "UTC timestamps round-trip and refuse anything else",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"), (951_782_400_999, "2000-02-29T00:00:00.999Z"),
            (1_750_000_000_123, "2025-06-15T15:06:40.123Z"), (253_402_300_799_000, "9999-12-31T23:59:59.000Z"),
        ])
    func timestamps(milliseconds: Int64, text: String) {
        #expect(UTCTimestamp.format(milliseconds: milliseconds) == text)
        #expect(UTCTimestamp.parse(text) == milliseconds)
        #expect(UTCTimestamp.parse(text.replacing("Z", with: "+00:00")) == nil)
        #expect(UTCTimestamp.parse("2001-02-29T00:00:00.000Z") == nil)
    }

    @Test("a namespace with no trail verifies as empty, and verify creates nothing")
    func freshVerify() throws {
        let directory = try freshDirectory() + "/absent"
        let backend = InMemoryBackend()
        let trail = AuditTrail(appID: appID, directory: directory, backend: backend)
        #expect(try trail.verify() == .intact(entryCount: 0, lastSequence: 0))
        #expect(try POSIX.status(of: directory) == nil)
        #expect(try backend.list(kind: nil).isEmpty)
        #expect(try trail.entries().isEmpty)
    }

    @Test("a missing trail with an anchor, a missing anchor and a missing key are each detected")
    func missingPieces() throws {
        let directory = try freshDirectory()
        let backend = InMemoryBackend()
        let trail = AuditTrail(appID: appID, directory: directory, backend: backend)
        for _ in 0..<3 { try trail.record(.sessionSaved, outcome: .ok, backend: .memory) }
        let bytes = try POSIX.File.open(trail.path, .read).readAll()
        try POSIX.removeFile(trail.path)
        #expect(try !trail.verify().isIntact)
        let refused = #expect(throws: LatchkeyError.self) { try trail.record(.wipe, outcome: .ok, backend: .memory) }
        #expect(refused?.code == .tampered)

        try overwrite(trail.path, with: bytes)
        let anchor = try fileBytes(trail.anchorFile.path)
        try POSIX.removeFile(trail.anchorFile.path)
        #expect(try !trail.verify().isIntact)
        try overwrite(trail.anchorFile.path, with: anchor)
        #expect(try trail.verify().isIntact)

        try backend.delete(trail.keyItem)
        #expect(try !trail.verify().isIntact)
        // The key is read once per process: a new process (a new trail instance) finds it gone.
        let nextProcess = AuditTrail(appID: appID, directory: directory, backend: backend)
        let noKey = #expect(throws: LatchkeyError.self) {
            try nextProcess.record(.wipe, outcome: .ok, backend: .memory)
        }
        #expect(noKey?.code == .tampered)
        #expect(try POSIX.File.open(trail.path, .read).readAll() == bytes)
    }

    @Test("an append refuses to continue a trail whose tail was cut, so the cut is never hidden")
    func appendRefusesCutTail() throws {
        let directory = try freshDirectory()
        let trail = AuditTrail(appID: appID, directory: directory, backend: InMemoryBackend())
        for _ in 0..<10 { try trail.record(.sessionRead, outcome: .ok, backend: .memory) }
        let lines = try POSIX.File.open(trail.path, .read).readAll().split(separator: 10)
        let cut = Array(lines.dropLast(2).joined(separator: [10])) + [10]
        try overwrite(trail.path, with: cut)
        let error = #expect(throws: LatchkeyError.self) { try trail.record(.wipe, outcome: .ok, backend: .memory) }
        #expect(error?.code == .tampered)
        #expect(try POSIX.File.open(trail.path, .read).readAll() == cut)
        guard case .broken(let sequence, let reason) = try trail.verify() else {
            Issue.record("a cut tail verified")
            return
        }
        #expect(sequence == 9 && reason.contains("cut"))
    }

    @Test("a partial last line from a crash is reported by verify and dropped by the next append")
    func partialLine() throws {
        let directory = try freshDirectory()
        let trail = AuditTrail(appID: appID, directory: directory, backend: InMemoryBackend())
        for _ in 0..<4 { try trail.record(.sessionRead, outcome: .ok, backend: .memory) }
        let file = try POSIX.File.open(trail.path, .appendCreate(permissions: 0o600))
        try file.writeAll(Array(#"{"seq":5,"time":"2025-"#.utf8))
        guard case .broken(let sequence, let reason) = try trail.verify() else {
            Issue.record("a partial line verified")
            return
        }
        #expect(sequence == 5 && reason.contains("incomplete"))
        try trail.record(.wipe, outcome: .ok, backend: .memory)
        #expect(try trail.verify() == .intact(entryCount: 5, lastSequence: 5))
    }

    @Test("an entry written before a crash stopped the anchor update still verifies, and appends continue")
    func crashBeforeAnchorUpdate() throws {
        let directory = try freshDirectory()
        let backend = InMemoryBackend()
        let trail = AuditTrail(appID: appID, directory: directory, backend: backend)
        try trail.record(.sessionSaved, outcome: .ok, backend: .memory)
        let earlier = try fileBytes(trail.anchorFile.path)
        try trail.record(.sessionRead, outcome: .ok, backend: .memory)
        try overwrite(trail.anchorFile.path, with: earlier)
        #expect(try trail.verify() == .intact(entryCount: 2, lastSequence: 2))
        try trail.record(.logout, outcome: .ok, backend: .memory)
        #expect(try trail.verify() == .intact(entryCount: 3, lastSequence: 3))
    }

    /// A trail in `directory` whose appends leave their `fsync` and anchor move to the returned deferral, as the agent's do.
    private func deferredTrail(
        _ directory: String, _ backend: InMemoryBackend, retention: AuditRetention = .unbounded
    ) -> (AuditTrail, AuditSyncDeferral) {
        let deferral = AuditSyncDeferral()
        deferral.isDeferring = true
        let trail = AuditTrail(
            appID: appID, directory: directory, backend: backend, retention: retention, clock: { Date() },
            deferral: deferral)
        return (trail, deferral)
    }

    @Test(
        "an append deferred to the agent's settle is in the file at once and one past its anchor; the next append of any trail anchors it first"
    )
    func deferredAppends() throws {
        let directory = try freshDirectory()
        let backend = InMemoryBackend()
        let (deferred, deferral) = deferredTrail(directory, backend)
        func anchored() throws -> UInt64? {
            try deferred.readAnchor(key: #require(try deferred.storedKey())).value?.sequence
        }
        try deferred.record(.sessionSaved, outcome: .ok, backend: .memory)
        #expect(try deferred.entries().map(\.sequence) == [1], "written before the append returns")
        #expect(try anchored() == 0, "the anchor moves only when it is settled")
        #expect(try deferred.verify() == .intact(entryCount: 1, lastSequence: 1))
        // Two appends under one lock (an operation's `.started` entry, then its own): the first
        // is anchored before the second is written, so the trail is never two past its anchor.
        try deferred.withAppender { appender in
            try appender.append(.sessionRead, outcome: .ok, backend: .memory)
            try appender.append(.sessionRead, outcome: .ok, backend: .memory)
        }
        #expect(try anchored() == 2)
        #expect(try deferred.verify() == .intact(entryCount: 3, lastSequence: 3))
        #expect(deferral.settle().isEmpty)
        #expect(try anchored() == 3)
        // Another process appending before the settle anchors the deferred entry, then its own.
        try deferred.record(.sessionRead, outcome: .ok, backend: .memory)
        #expect(try anchored() == 3)
        let other = AuditTrail(appID: appID, directory: directory, backend: backend)
        try other.record(.logout, outcome: .ok, backend: .memory)
        #expect(try anchored() == 5)
        #expect(deferral.settle().isEmpty, "nothing is left to do, and the anchor never moves back")
        #expect(try anchored() == 5)
        // A process killed before its settle leaves its entry written and one past the anchor.
        try deferred.record(.sessionRead, outcome: .ok, backend: .memory)
        #expect(try other.verify() == .intact(entryCount: 6, lastSequence: 6))
        try other.record(.wipe, outcome: .ok, backend: .memory)
        #expect(try anchored() == 7)
        #expect(try other.verify() == .intact(entryCount: 7, lastSequence: 7))
        // A settle anchors what its own append wrote: an entry altered in place before it
        // (same size, same file) is then found by verify, never vouched for.
        try deferred.record(.sessionRead, outcome: .ok, backend: .memory, detail: "aaaa")
        let text = String(decoding: try fileBytes(deferred.path), as: UTF8.self)
        try overwrite(deferred.path, with: Array(text.replacingOccurrences(of: "\"aaaa\"", with: "\"bbbb\"").utf8))
        #expect(deferral.settle().isEmpty)
        #expect(try anchored() == 8)
        guard case .broken(let sequence, _) = try other.verify() else {
            Issue.record("an entry altered before its settle verified")
            return
        }
        #expect(sequence == 8)
    }

    @Test(
        "a deferred append trims like any other, anchoring first, and its settle creates nothing once the namespace is gone"
    )
    func deferredAppendsTrimAndNeverRecreate() throws {
        let (trail, deferral) = deferredTrail(
            try freshDirectory(), InMemoryBackend(), retention: AuditRetention(maxEntries: 20, maxAge: nil))
        for index in 1...60 {
            try trail.record(.sessionRead, outcome: .ok, backend: .memory)
            #expect(try trail.entries().count <= 20, "\(index)")
            if index % 7 == 0 { #expect(deferral.settle().isEmpty) }
        }
        #expect(deferral.settle().isEmpty)
        let entries = try trail.entries()
        #expect(entries.first?.event == .checkpoint && entries.last?.sequence == 60)
        #expect(try trail.readAnchor(key: #require(try trail.storedKey())).value?.sequence == 60)
        #expect(try trail.verify() == .intact(entryCount: entries.count, lastSequence: 60))

        // The store removed after the answer: the settle neither fails nor brings anything back.
        try trail.record(.sessionRead, outcome: .ok, backend: .memory)
        try FileManager.default.removeItem(atPath: trail.namespace.path)
        #expect(deferral.settle().isEmpty)
        #expect(try POSIX.status(of: trail.namespace.path) == nil)
    }

    @Test(
        "a failed audit write throws: backend failure, insecure directory, malformed event; a long detail is shortened instead"
    )
    func failuresThrow() throws {
        let directory = try freshDirectory()
        let backend = InMemoryBackend()
        let trail = AuditTrail(appID: appID, directory: directory, backend: backend)
        backend.fail(with: LatchkeyError(.unavailable, "store down"))
        #expect(throws: LatchkeyError(.unavailable, "")) {
            try trail.record(.sessionSaved, outcome: .ok, backend: .memory)
        }
        backend.removeFailures()
        #expect(throws: LatchkeyError(.invalidInput, "")) {
            try trail.record(AuditEvent(rawValue: "Session Saved"), outcome: .ok, backend: .memory)
        }
        // A long detail is shortened with a mark, never a reason to lose the entry (issue 14, item 4).
        let long = try trail.record(
            .sessionSaved, outcome: .ok, backend: .memory, detail: String(repeating: "é", count: 400))
        let detail = try #require(long.detail)
        #expect(detail.utf8.count <= AuditEntry.maximumDetailLength)
        let mark = try #require(detail.range(of: "… [truncated: "))
        let kept = detail[..<mark.lowerBound]
        #expect(kept.allSatisfy { $0 == "é" } && kept.count > 200, "cut at a character boundary: \(detail)")
        #expect(detail.hasSuffix("… [truncated: \(800 - kept.utf8.count) more bytes]"), "\(detail)")
        try trail.record(.sessionSaved, outcome: .ok, backend: .memory)
        #expect(chmod(trail.path, 0o644) == 0)
        #expect(throws: LatchkeyError(.insecurePermissions, "")) {
            try trail.record(.sessionSaved, outcome: .ok, backend: .memory)
        }
        #expect(throws: LatchkeyError(.insecurePermissions, "")) { try trail.verify() }
    }

    @Test("retention by entries trims behind a checkpoint and the chain stays verifiable")
    func retentionByEntries() throws {
        let directory = try freshDirectory()
        let backend = InMemoryBackend()
        let trail = AuditTrail(
            appID: appID, directory: directory, backend: backend, retention: AuditRetention(maxEntries: 20, maxAge: nil)
        )
        for index in 1...100 {
            try trail.record(.sessionSaved, outcome: .ok, backend: .memory, account: "user\(index % 3)")
            #expect(try trail.entries().count <= 20)
        }
        let entries = try trail.entries()
        #expect(entries.first?.event == .checkpoint && entries.first?.continuesFrom != nil)
        #expect(entries.last?.sequence == 100)
        #expect(try trail.verify() == .intact(entryCount: entries.count, lastSequence: 100))

        let bytes = try POSIX.File.open(trail.path, .read).readAll()
        let lines = bytes.split(separator: 10)
        try overwrite(trail.path, with: Array(lines.dropFirst().joined(separator: [10])) + [10])
        #expect(try !trail.verify().isIntact, "removing the checkpoint must be detected")
        var checkpoint = Array(lines[0])
        let marker = Array("\"continuesFrom\":\"".utf8)
        let at = try #require(checkpoint.indices.first { checkpoint[$0...].starts(with: marker) }) + marker.count
        checkpoint[at] = checkpoint[at] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        try overwrite(trail.path, with: checkpoint + [10] + Array(lines.dropFirst().joined(separator: [10])) + [10])
        #expect(try !trail.verify().isIntact, "an altered checkpoint must be detected")
        try overwrite(trail.path, with: bytes)
        #expect(try trail.verify().isIntact)
    }

    @Test("retention by age drops old entries at the next append and keeps the chain verifiable")
    func retentionByAge() throws {
        let directory = try freshDirectory()
        let clock = ManualClock()
        let trail = AuditTrail(
            appID: appID, directory: directory, backend: InMemoryBackend(),
            retention: AuditRetention(maxEntries: nil, maxAge: 10 * 86_400), clock: clock.read)
        for _ in 0..<20 {
            try trail.record(.sessionRead, outcome: .ok, backend: .memory)
            clock.advance(by: 86_400)
        }
        let entries = try trail.entries()
        #expect(entries.first?.event == .checkpoint)
        let cutoff = clock.read().addingTimeInterval(-86_400 - 10 * 86_400)
        #expect(entries.dropFirst().allSatisfy { $0.time >= cutoff })
        #expect(entries.count <= 12 && entries.last?.sequence == 20)
        #expect(try trail.verify() == .intact(entryCount: entries.count, lastSequence: 20))
    }
}
