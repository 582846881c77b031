import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Secret Service backend", .sandboxed, .needsSecretService)
struct SecretServiceBackendTests {
    static let allBytes = SecretBytes((0...255).map { UInt8($0) })
    static let large = SecretBytes.random(count: 64 * 1024)

    @Test("the first item stored through libsecret reads back")
    func firstStoreAndReadBack() async throws {
        try await SecretServiceTestSupport.withBackend("first") { backend in
            let key = ItemKey(kind: .session, account: "alice@example.com", name: "access")
            let item = StoredItem(
                value: SecretBytes(utf8: "token-1"), created: Date(), expires: Date().addingTimeInterval(3600))
            try backend.write(item, for: key)
            #expect(try backend.read(key) == item)
        }
    }

    @Test(
        "values round-trip whole",
        arguments: [
            ("empty", SecretBytes()),
            ("64 KiB", large),
            ("all 256 byte values", allBytes),
            ("non-ASCII", SecretBytes(utf8: "Grüße, 你好, пароль, 🔑")),
        ])
    func roundTrip(label: String, value: SecretBytes) async throws {
        try await SecretServiceTestSupport.withBackend("roundtrip") { backend in
            let key = ItemKey(kind: .session, account: "Jörg 用户", name: "refresh")
            let item = StoredItem(
                value: value, created: Date(timeIntervalSinceReferenceDate: 123_456.789), expires: nil)
            try backend.write(item, for: key)
            let read = try #require(try backend.read(key), "\(label) was not found")
            #expect(read.value == value, "\(label) changed")
            #expect(read.created == item.created)
            #expect(read.expires == nil)
        }
    }

    @Test("a write replaces the item with the same key, and only it")
    func overwrite() async throws {
        try await SecretServiceTestSupport.withBackend("overwrite") { backend in
            let key = ItemKey(kind: .session, account: "bob", name: "access")
            let neighbour = ItemKey(kind: .session, account: "bob", name: "refresh")
            try backend.write(StoredItem(value: SecretBytes(utf8: "old")), for: key)
            try backend.write(StoredItem(value: SecretBytes(utf8: "other")), for: neighbour)
            let newer = StoredItem(value: SecretBytes(utf8: "new"), expires: Date().addingTimeInterval(60))
            try backend.write(newer, for: key)
            #expect(try backend.read(key) == newer)
            #expect(try backend.read(neighbour)?.value == SecretBytes(utf8: "other"))
            #expect(try backend.list(kind: nil).count == 2)
        }
    }

    @Test("absent items read as nil and delete without error; deleted items are gone")
    func deleteAndAbsent() async throws {
        try await SecretServiceTestSupport.withBackend("delete") { backend in
            let key = ItemKey(kind: .username, name: "last")
            #expect(try backend.read(key) == nil)
            try backend.delete(key)
            try backend.write(StoredItem(value: SecretBytes(utf8: "carol")), for: key)
            try backend.delete(key)
            #expect(try backend.read(key) == nil)
            try backend.delete(key)
            #expect(try backend.read(ItemKey(kind: .username, account: "someone", name: "last")) == nil)
        }
    }

    @Test("list recovers the real account names, with and without a kind filter")
    func list() async throws {
        try await SecretServiceTestSupport.withBackend("list") { backend in
            let keys = [
                ItemKey(kind: .session, account: "dora@example.com", name: "access"),
                ItemKey(kind: .session, account: "eve", name: "access"),
                ItemKey(kind: .username, name: "last"),
                ItemKey(kind: .setting, name: "remember"),
            ]
            #expect(try backend.list(kind: nil).isEmpty)
            for key in keys { try backend.write(StoredItem(value: SecretBytes(utf8: "v")), for: key) }
            #expect(Set(try backend.list(kind: nil)) == Set(keys))
            #expect(Set(try backend.list(kind: .session)) == Set(keys.prefix(2)))
            #expect(try backend.list(kind: .username) == [keys[2]])
            #expect(try backend.list(kind: ItemKey.Kind(rawValue: "unused")).isEmpty)
        }
    }

    @Test("deleteAll removes only its own namespace")
    func deleteAllIsolation() async throws {
        try await SecretServiceTestSupport.withBackend("theirs") { other in
            try await SecretServiceTestSupport.withBackend("mine") { backend in
                let key = ItemKey(kind: .session, account: "frank", name: "access")
                try backend.write(StoredItem(value: SecretBytes(utf8: "mine")), for: key)
                try other.write(StoredItem(value: SecretBytes(utf8: "theirs")), for: key)
                let marker = "latchkey-test-\(UInt64.random(in: 0...UInt64.max))"
                let stored = try runProgram(
                    "secret-tool",
                    [
                        "store", "--label=Not Latchkey", "app", backend.appID.rawValue, "kind", "session", "marker",
                        marker,
                    ],
                    input: "foreign-value")
                try #require(stored.status == 0, "secret-tool store failed: \(stored.stderr)")

                try backend.deleteAll()

                #expect(try backend.read(key) == nil)
                #expect(try backend.list(kind: nil).isEmpty)
                #expect(try other.read(key)?.value == SecretBytes(utf8: "theirs"))
                let lookup = try runProgram("secret-tool", ["lookup", "marker", marker])
                #expect(lookup.text == "foreign-value")
                let cleared = try runProgram("secret-tool", ["clear", "marker", marker])
                #expect(cleared.status == 0)
            }
        }
    }

    @Test("8 concurrent tasks x 100 writes are all readable afterwards")
    func concurrentWrites() async throws {
        try await SecretServiceTestSupport.withBackend("concurrent", deadline: .seconds(30)) { backend in
            // The deadline bounds waiting behind the other writers too; the point here
            // is that nothing is lost or corrupted, so it is generous.
            // Each task runs its blocking calls on a thread of its own, so the
            // writers really overlap and the test runner's few threads stay free.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        try await SecretServiceTestSupport.onOwnThread {
                            for index in 0..<100 {
                                try backend.write(
                                    StoredItem(value: SecretBytes(utf8: "value-\(task)-\(index)")),
                                    for: ItemKey(kind: .session, account: "account-\(task)", name: "item-\(index)"))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let values = try await SecretServiceTestSupport.onOwnThread {
                try (0..<8).flatMap { task in
                    try (0..<100).map { index in
                        try backend.read(ItemKey(kind: .session, account: "account-\(task)", name: "item-\(index)"))?
                            .value.utf8String()
                    }
                }
            }
            #expect(values == (0..<8).flatMap { task in (0..<100).map { "value-\(task)-\($0)" } })
            #expect(try backend.list(kind: .session).count == 800)
        }
    }

    @Test("a malformed payload is reported as damaged, not as a crash, and does not stop a listing")
    func tamperedPayload() async throws {
        try await SecretServiceTestSupport.withBackend("tampered") { backend in
            try backend.write(StoredItem(value: SecretBytes(utf8: "good")), for: ItemKey(kind: .setting, name: "real"))
            let attributes = [
                "xdg:schema", SecretServiceAttributes.schemaName, "app", backend.appID.rawValue,
                "kind", "session", "account", String(repeating: "0", count: 64), "name", "forged",
            ]
            let stored = try runProgram(
                "secret-tool", ["store", "--label=forged"] + attributes, input: "\u{01}garbage")
            try #require(stored.status == 0, "secret-tool store failed: \(stored.stderr)")
            #expect(try backend.list(kind: nil) == [ItemKey(kind: .setting, name: "real")])
            #expect(try backend.list(kind: .session).isEmpty)
            #expect(try backend.damagedItems().map(\.name) == ["forged"])
        }
    }

    /// Two backends of one fresh namespace, as two processes (or the agent and a process) have.
    private static func twoInstances(_ label: String) throws -> (SecretServiceBackend, SecretServiceBackend) {
        let appID = try SecretServiceTestSupport.freshAppID(label)
        return (SecretServiceBackend(appID: appID), SecretServiceBackend(appID: appID))
    }

    @Test("a backend that remembers the pseudonym key still finds items after another instance replaced the namespace")
    func replacedKey() async throws {
        let (first, other) = try Self.twoInstances("replacedkey")
        let key = ItemKey(kind: .session, account: "alice", name: "access")
        try await SecretServiceTestSupport.onOwnThread {
            try first.write(StoredItem(value: SecretBytes(utf8: "old")), for: key)
            #expect(try first.read(key)?.value == SecretBytes(utf8: "old"))
            try other.deleteAll()
            try other.write(StoredItem(value: SecretBytes(utf8: "new")), for: key)
            #expect(try first.read(key)?.value == SecretBytes(utf8: "new"))
            try first.delete(key)
            #expect(try other.read(key) == nil)
            try other.deleteAll()
        }
    }

    @Test(
        "a backend that read an item by its remembered path sees what another instance replaced, deleted or stored anew"
    )
    func rememberedPath() async throws {
        let (reader, writer) = try Self.twoInstances("knownpath")
        let key = ItemKey(kind: .session, account: "alice", name: "access")
        try await SecretServiceTestSupport.onOwnThread {
            try writer.write(StoredItem(value: SecretBytes(utf8: "one")), for: key)
            #expect(try reader.read(key)?.value == SecretBytes(utf8: "one"))
            #expect(try reader.read(key)?.value == SecretBytes(utf8: "one"), "read again, by the remembered path")
            try writer.write(StoredItem(value: SecretBytes(utf8: "two")), for: key)
            #expect(try reader.read(key)?.value == SecretBytes(utf8: "two"), "replaced in place")
            try writer.delete(key)
            #expect(try reader.read(key) == nil, "deleted")
            try writer.write(StoredItem(value: SecretBytes(utf8: "three")), for: key)
            #expect(try reader.read(key)?.value == SecretBytes(utf8: "three"), "stored anew, at another path")
            let other = ItemKey(kind: .session, account: "alice", name: "other")
            try writer.write(StoredItem(value: SecretBytes(utf8: "four")), for: other)
            #expect(try reader.read(other)?.value == SecretBytes(utf8: "four"))
            #expect(try reader.read(key)?.value == SecretBytes(utf8: "three"), "each address keeps its own path")
            try writer.deleteAll()
            #expect(try reader.read(key) == nil && reader.read(other) == nil)
        }
    }
}
