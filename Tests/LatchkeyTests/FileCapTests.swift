import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@testable import Latchkey

/// Every file Latchkey reads has a cap its format derives, checked by size before reading
/// (issue 25; the table is in docs/FILE-FORMAT.md).
@Suite("Caps on the files Latchkey reads", .sandboxed)
struct FileCapTests {
    /// Makes `path` a sparse file of `length` bytes, its first bytes kept.
    func extend(_ path: String, to length: Int) throws {
        try POSIX.File.open(path, .readWriteCreate(permissions: 0o600)).truncate(to: length)
    }

    @Test("a change that would make the vault longer than 64 MiB is refused and changes nothing")
    func vaultWriteCapped() throws {
        let backend = EncryptedFileBackend(
            appID: try AppID("com.example.cap"), directory: try freshDirectory() + "/store", keySource: .keyFile)
        let small = ItemKey(kind: .session, name: "small")
        try backend.write(StoredItem(value: SecretBytes(utf8: "t")), for: small)
        let large = SecretBytes(count: VaultFormat.maximumFileLength) {
            $0.initializeMemory(as: UInt8.self, repeating: 1)
        }
        let refused = #expect(throws: LatchkeyError.self) {
            try backend.write(StoredItem(value: large), for: ItemKey(kind: .session, name: "large"))
        }
        #expect(refused?.code == .invalidInput && refused?.message.contains("the most a vault holds") == true)
        #expect(try backend.list(kind: nil) == [small], "nothing was changed")
    }

    @Test("a trail longer than 1 GiB is refused by its size, before reading, by verify and show")
    func trailCapped() throws {
        let trail = AuditTrail(
            appID: try AppID("com.example.cap"), directory: try freshDirectory() + "/store", backend: InMemoryBackend())
        try trail.record(.sessionRead, outcome: .ok, backend: .memory)
        try extend(trail.path, to: AuditTrail.maximumFileLength + 1)
        let clock = ContinuousClock()
        let start = clock.now
        for read in [{ _ = try trail.verify() }, { _ = try trail.entries() }] {
            let refused = #expect(throws: LatchkeyError.self) { try read() }
            #expect(refused?.code == .invalidInput && refused?.message.contains("an audit trail") == true)
        }
        #expect(clock.now - start < .seconds(1))
    }

    @Test("an anchor file longer than two slots holds no anchor: the trail is broken")
    func anchorCapped() throws {
        let trail = AuditTrail(
            appID: try AppID("com.example.cap"), directory: try freshDirectory() + "/store", backend: InMemoryBackend())
        try trail.record(.sessionRead, outcome: .ok, backend: .memory)
        #expect(try trail.verify().isIntact)
        try extend(trail.anchorFile.path, to: AuditAnchorFile.fileLength + 1)
        #expect(try trail.anchorFile.read(key: #require(try trail.storedKey())) == .invalid)
        #expect(try !trail.verify().isIntact)
    }
}
