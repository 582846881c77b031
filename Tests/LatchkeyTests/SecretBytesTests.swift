import LatchkeyTestSupport
import Synchronization
import Testing

@testable import Latchkey

@Suite("SecretBytes", .sandboxed)
struct SecretBytesTests {
    static let canary = "canary-7f3a-SECRET-value"

    @Test("released memory is zeroed before it is freed", .needsTestSeams)
    func zeroedOnRelease() {
        #if LATCHKEY_TEST_SEAMS
            let seen = Mutex<[(zeroed: Bool, count: Int)]>([])
            let observer: @Sendable (Bool, Int) -> Void = { zeroed, count in
                seen.withLock { $0.append((zeroed, count)) }
            }
            SecretBytes.$releaseObserver.withValue(observer) {
                do {
                    let secret = SecretBytes(utf8: Self.canary)
                    let copy = secret
                    #expect(copy.count == Self.canary.utf8.count)
                }
                do {
                    _ = SecretBytes.random(count: 32)
                }
            }
            let releases = seen.withLock { $0 }
            #expect(releases.map(\.count).sorted() == [32, Self.canary.utf8.count].sorted())
            #expect(releases.allSatisfy { $0.zeroed })
        #endif
    }

    @Test("a copy keeps the bytes alive until the last owner lets go", .needsTestSeams)
    func copiesShareStorage() {
        #if LATCHKEY_TEST_SEAMS
            let released = Mutex(0)
            var survivor: SecretBytes?
            let observer: @Sendable (Bool, Int) -> Void = { _, _ in released.withLock { $0 += 1 } }
            SecretBytes.$releaseObserver.withValue(observer) {
                let secret = SecretBytes(utf8: Self.canary)
                survivor = secret
            }
            #expect(released.withLock { $0 } == 0)
            #expect(survivor?.utf8String() == Self.canary)
        #endif
    }

    @Test("description, interpolation, debugDescription and dump never show the secret")
    func neverPrinted() {
        let secret = SecretBytes(utf8: Self.canary)
        var dumped = ""
        dump(secret, to: &dumped)
        let renderings = [
            String(describing: secret),
            "\(secret)",
            String(reflecting: secret),
            secret.debugDescription,
            dumped,
            String(describing: [secret]),
            String(describing: Optional(secret)),
            String(describing: StoredItem(value: secret)),
        ]
        for text in renderings {
            #expect(!text.contains(Self.canary), "leaked in: \(text)")
            #expect(!text.contains("canary"), "leaked in: \(text)")
        }
        #expect(String(describing: secret).contains("redacted"))
    }

    @Test(
        "equality",
        arguments: [
            ("same", "same", true),
            ("same", "sane", false),
            ("short", "shorter", false),
            ("", "", true),
            ("", "x", false),
        ])
    func equality(lhs: String, rhs: String, equal: Bool) {
        #expect((SecretBytes(utf8: lhs) == SecretBytes(utf8: rhs)) == equal)
    }

    @Test("round trips bytes and UTF-8 text at the edges")
    func conversions() {
        let all = (0...255).map(UInt8.init)
        #expect(SecretBytes(all).copyBytes() == all)
        #expect(SecretBytes(all).utf8String() == nil)
        #expect(SecretBytes(utf8: "Grüße, 世界").utf8String() == "Grüße, 世界")
        #expect(SecretBytes().isEmpty)
        #expect(SecretBytes.random(count: 32) != SecretBytes.random(count: 32))
    }
}

@Suite("Which secrets are in locked memory, as MemoryProtection's documentation says", .sandboxed)
struct LockedMemoryTests {
    /// The process's locked memory (`VmLck` in `/proc/self/status`), in kB.
    private func lockedKilobytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmLck:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test("an app's own secrets are on the ordinary heap, random and derived keys are locked")
    func lockedOnlyWhereDocumented() throws {
        let before = try lockedKilobytes()
        let appSecrets = (0..<20).map { _ in SecretBytes([UInt8](repeating: 0x5A, count: 1 << 20)) }
        let afterAppSecrets = try lockedKilobytes()
        #expect(afterAppSecrets - before < 1024, "20 MiB of app secrets locked \(afterAppSecrets - before) kB")
        let key = SecretBytes(count: 64 * 1024, guarded: true) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        // sodium_malloc locks where RLIMIT_MEMLOCK allows (as root, or a limit of 8 MiB); below that it cannot.
        let limits = try String(contentsOfFile: "/proc/self/limits", encoding: .utf8)
        let memlock = limits.split(separator: "\n").first { $0.hasPrefix("Max locked memory") }
        let soft = memlock?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first
        if soft == "unlimited" || (soft.flatMap { Int($0) } ?? 0) >= 8 << 20 {
            #expect(try lockedKilobytes() - afterAppSecrets >= 64, "a guarded 64 KiB key is not locked")
        }
        #expect(appSecrets.count == 20 && key.count == 64 * 1024)
    }
}

@Suite("Guarded blocks kept for reuse", .sandboxed)
struct GuardedBlocksTests {
    @Test("a block given back is handed out again, and no more than `kept` are kept")
    func reuse() throws {
        let blocks = Sodium.GuardedBlocks(kept: 2)
        let taken = try (0..<3).map { _ in try #require(blocks.take(count: 64)) }
        #expect(Set(taken).count == 3)
        for block in taken { blocks.give(back: block) }
        #expect(blocks.count == 2)
        let again = try (0..<2).map { _ in try #require(blocks.take(count: Sodium.GuardedBlocks.capacity)) }
        #expect(Set(again) == Set(taken.prefix(2)))
        #expect(blocks.count == 0)
        for block in again { blocks.give(back: block) }
    }

    @Test("a secret longer than a block gets one of its own, and both kinds round-trip")
    func longSecrets() throws {
        #expect(Sodium.GuardedBlocks(kept: 1).take(count: Sodium.GuardedBlocks.capacity + 1) == nil)
        for count in [1, Sodium.GuardedBlocks.capacity, Sodium.GuardedBlocks.capacity + 1, 20_000] {
            let secret = SecretBytes(count: count, guarded: true) {
                $0.initializeMemory(as: UInt8.self, repeating: 0xA5)
            }
            #expect(secret.withUnsafeBytes { $0.count == count && $0.allSatisfy { $0 == 0xA5 } })
        }
    }
}
