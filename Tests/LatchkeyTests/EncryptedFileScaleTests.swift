import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Encrypted file backend at scale", .sandboxed)
struct EncryptedFileScaleTests {
    /// Mean time per call of `body`, over `count` calls, in microseconds.
    private func microseconds(per count: Int, _ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<count { try body() }
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) * 1e6 / Double(count) + Double(elapsed.components.attoseconds) / 1e12
            / Double(count)
    }

    @Test("10 and 10,000 entries: every entry reads back; per-operation times are printed", arguments: [10, 10_000])
    func manyEntries(count: Int) throws {
        let backend = try makeFileBackend(fastPassphrase())
        var items: [ItemKey: StoredItem] = [:]
        for i in 0..<(count - 1) {
            items[ItemKey(kind: .session, account: "user\(i % 97)", name: "token-\(i)")] = StoredItem(
                value: SecretBytes(utf8: "value-\(i)-" + String(repeating: "x", count: i % 40)))
        }
        try backend.write(contentsOf: items)
        let last = ItemKey(kind: .session, account: "user-last", name: "token-last")
        let writeMicros = try microseconds(per: 5) {
            try backend.write(StoredItem(value: SecretBytes(utf8: "last")), for: last)
        }
        let probe = ItemKey(kind: .session, account: "user\(5 % 97)", name: "token-5")
        let readMicros = try microseconds(per: 1000) { _ = try backend.read(probe) }

        let reopened = EncryptedFileBackend(appID: testAppID, directory: backend.directory, keySource: fastPassphrase())
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try reopened.list(kind: nil).count == count)
        let firstRead = clock.now - start
        for (key, item) in items {
            #expect(try reopened.read(key)?.value == item.value)
        }
        #expect(try reopened.read(last)?.value == SecretBytes(utf8: "last"))
        let size = try POSIX.status(of: backend.vaultPath)?.size ?? 0
        print(
            "encrypted file, \(count) entries (\(size) bytes): cached read \((readMicros * 10).rounded() / 10) µs, write \(writeMicros.rounded()) µs, first read of a fresh instance \(firstRead)"
        )
    }
}
