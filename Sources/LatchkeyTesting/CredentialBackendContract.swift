import Dispatch
import Latchkey
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The rules every ``/Latchkey/CredentialBackend`` keeps, as checks an app can
/// run against a store of its own (Latchkey runs them against each of its
/// stores in its own tests).
///
/// Give the contract a way to open the store of a namespace; each rule opens
/// fresh namespaces, checks one rule, and erases what it stored. With Swift
/// Testing, one parameterised test covers every rule:
///
/// ```swift
/// @Test(arguments: CredentialBackendContract.Rule.allCases)
/// func contract(rule: CredentialBackendContract.Rule) throws {
///     try CredentialBackendContract { appID in MyStore(appID: appID) }.check(rule)
/// }
/// ```
public struct CredentialBackendContract: Sendable {
    /// One rule of the contract.
    public enum Rule: String, CaseIterable, Sendable, CustomStringConvertible {
        /// Reading an absent item returns nil; deleting one succeeds.
        case absentIsNil = "absent is nil, and deleting it succeeds"
        /// A write is read back whole: value, creation and expiry times (to the millisecond).
        case readsBackWhatWasWritten = "an item reads back as written"
        /// Values are opaque bytes: empty, binary, NUL bytes and 64 KiB long.
        case valuesAreOpaqueBytes = "values are opaque bytes of any length"
        /// A write replaces the item with the same key whole, expiry included.
        case writeReplacesWhole = "a write replaces the item whole"
        /// Kind, account and name together address an item; each differs.
        case keysAreDistinct = "kind, account and name each tell items apart"
        /// `list` returns exactly the keys stored, filtered by kind.
        case listsWhatIsStored =
            "list returns the keys stored, by kind, named secrets and Latchkey's own kinds (setting, key) included"
        /// Deleting one item leaves the others.
        case deleteRemovesOnlyThatItem = "delete removes only that item"
        /// `deleteAll` leaves the namespace empty and usable.
        case deleteAllEmptiesTheNamespace = "deleteAll empties the namespace, which stays usable"
        /// Two namespaces never see, list or delete each other's items.
        case namespacesAreIsolated = "namespaces are isolated"
        /// A second instance of the same namespace sees what the first wrote.
        case writesAreVisibleToANewInstance = "a new instance sees what was written"
        /// Concurrent writes, reads and deletes of different keys all take effect.
        case concurrentCallsAreSafe = "concurrent calls are safe"

        /// The rule in words.
        public var description: String { rawValue }
    }

    /// A rule that a store broke: which, and what was seen.
    public struct Violation: Error, CustomStringConvertible {
        /// The rule broken.
        public let rule: Rule
        /// What was expected and what happened.
        public let finding: String
        /// The rule and the finding.
        public var description: String { "contract rule '\(rule)' broken: \(finding)" }
    }

    private let open: @Sendable (AppID) throws -> any CredentialBackend

    /// Creates the contract for a store.
    /// - Parameter open: Opens the store of a namespace. Called with new
    ///   namespaces, and again with the same namespace where a rule needs a
    ///   second instance; it must return a store that reaches the same items.
    public init(open: @escaping @Sendable (AppID) throws -> any CredentialBackend) {
        self.open = open
    }

    /// Checks every rule.
    /// - Returns: The rules broken; empty when the store keeps the contract.
    public func violations() -> [Violation] {
        Rule.allCases.compactMap { rule in
            do {
                try check(rule)
                return nil
            } catch let violation as Violation {
                return violation
            } catch {
                return Violation(rule: rule, finding: "threw \(error)")
            }
        }
    }

    /// Checks one rule against fresh namespaces, erasing them afterwards.
    /// - Parameter rule: The rule.
    /// - Throws: ``Violation`` when the store breaks it; the store's own error
    ///   when a call fails that the rule expects to succeed.
    public func check(_ rule: Rule) throws {
        let first = try open(Self.freshAppID())
        defer { try? first.deleteAll() }
        let checker = Checker(rule: rule)
        switch rule {
        case .absentIsNil:
            let key = ItemKey(kind: .session, account: "alice", name: "never-written")
            try checker.expect(first.read(key) == nil, "reading an absent item returned an item")
            try first.delete(key)
            try checker.expect(first.list(kind: nil).isEmpty, "a new namespace lists items")
        case .readsBackWhatWasWritten:
            let item = Self.item("token-1", expires: Date().addingTimeInterval(3_600))
            try first.write(item, for: Self.access)
            try checker.expectSame(first.read(Self.access), item)
        case .valuesAreOpaqueBytes:
            let values: [[UInt8]] = [
                [], [0, 0, 0], Array(0...255), (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) },
            ]
            for (index, bytes) in values.enumerated() {
                let key = ItemKey(kind: .session, account: "alice", name: "opaque-\(index)")
                let item = StoredItem(value: SecretBytes(bytes), created: Self.created)
                try first.write(item, for: key)
                try checker.expectSame(first.read(key), item, "\(bytes.count) bytes")
            }
        case .writeReplacesWhole:
            try first.write(Self.item("old", expires: Date().addingTimeInterval(60)), for: Self.access)
            let replacement = Self.item("new", expires: nil)
            try first.write(replacement, for: Self.access)
            try checker.expectSame(first.read(Self.access), replacement, "after a replacing write")
            try checker.expect(first.list(kind: .session).count == 1, "a replacing write left two items")
        case .keysAreDistinct:
            let keys = [
                ItemKey(kind: .session, account: "alice", name: "access"),
                ItemKey(kind: .session, account: "bob", name: "access"),
                ItemKey(kind: .session, account: "alice", name: "refresh"),
                ItemKey(kind: .username, account: "alice", name: "access"),
                ItemKey(kind: .session, account: "", name: "access"),
                ItemKey(kind: .setting, name: "access"),
                ItemKey(kind: .secret, name: "access"),
                ItemKey(kind: .key, name: "access"),
            ]
            for (index, key) in keys.enumerated() { try first.write(Self.item("value-\(index)"), for: key) }
            for (index, key) in keys.enumerated() {
                try checker.expect(
                    first.read(key)?.value == SecretBytes(utf8: "value-\(index)"), "\(key) did not keep its own value")
            }
        case .listsWhatIsStored:
            let sessions = [Self.access, ItemKey(kind: .session, account: "bob", name: "refresh")]
            let username = ItemKey(kind: .username, name: "last")
            // The other kinds every backend receives: a named secret, a setting and a key.
            let own = [
                ItemKey(kind: .secret, name: "api-key"), ItemKey(kind: .setting, name: "rememberUsername"),
                ItemKey(kind: .key, name: "audit.test"),
            ]
            for key in sessions + [username] + own { try first.write(Self.item("v"), for: key) }
            try checker.expect(
                Set(try first.list(kind: .session)) == Set(sessions),
                "list(kind: .session) differs from the sessions stored")
            try checker.expect(
                try first.list(kind: .username) == [username], "list(kind: .username) differs from the username stored")
            for key in own {
                try checker.expect(
                    try first.list(kind: key.kind) == [key], "list(kind: .\(key.kind)) differs from the item stored")
            }
            try checker.expect(
                Set(try first.list(kind: nil)) == Set(sessions + [username] + own),
                "list(kind: nil) differs from everything stored")
        case .deleteRemovesOnlyThatItem:
            let other = ItemKey(kind: .session, account: "alice", name: "refresh")
            try first.write(Self.item("a"), for: Self.access)
            try first.write(Self.item("b"), for: other)
            try first.delete(Self.access)
            try checker.expect(first.read(Self.access) == nil, "a deleted item still reads")
            try checker.expect(first.read(other)?.value == SecretBytes(utf8: "b"), "deleting one item lost another")
            try checker.expect(first.list(kind: nil) == [other], "list after a delete differs")
        case .deleteAllEmptiesTheNamespace:
            for name in ["a", "b", "c"] {
                try first.write(Self.item(name), for: ItemKey(kind: .session, account: "alice", name: name))
            }
            try first.write(Self.item("alice"), for: ItemKey(kind: .username, name: "last"))
            try first.deleteAll()
            try checker.expect(first.list(kind: nil).isEmpty, "deleteAll left items")
            try first.deleteAll()
            try first.write(Self.item("again"), for: Self.access)
            try checker.expect(
                first.read(Self.access)?.value == SecretBytes(utf8: "again"),
                "the namespace is unusable after deleteAll")
        case .namespacesAreIsolated:
            let second = try open(Self.freshAppID())
            defer { try? second.deleteAll() }
            try first.write(Self.item("mine"), for: Self.access)
            try checker.expect(second.read(Self.access) == nil, "another namespace reads the item")
            try checker.expect(second.list(kind: nil).isEmpty, "another namespace lists the item")
            try second.write(Self.item("theirs"), for: Self.access)
            try second.deleteAll()
            try checker.expect(
                first.read(Self.access)?.value == SecretBytes(utf8: "mine"),
                "another namespace's writes or deleteAll reached this one")
        case .writesAreVisibleToANewInstance:
            let appID = try Self.freshAppID()
            let writer = try open(appID)
            defer { try? writer.deleteAll() }
            let item = Self.item("durable", expires: Date().addingTimeInterval(600))
            try writer.write(item, for: Self.access)
            try checker.expectSame(open(appID).read(Self.access), item, "from a new instance")
        case .concurrentCallsAreSafe:
            let store = first
            let failures = ConcurrentFailures()
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                do {
                    for round in 0..<4 {
                        let key = ItemKey(kind: .session, account: "worker-\(worker)", name: "round-\(round)")
                        try store.write(Self.item("\(worker)-\(round)"), for: key)
                        guard try store.read(key)?.value == SecretBytes(utf8: "\(worker)-\(round)") else {
                            return failures.add("worker \(worker) did not read back its own write")
                        }
                        if round % 2 == 1 { try store.delete(key) }
                    }
                } catch {
                    failures.add("worker \(worker) failed: \(error)")
                }
            }
            try checker.expect(failures.all.isEmpty, failures.all.joined(separator: "; "))
            try checker.expect(
                first.list(kind: .session).count == 8, "expected 8 items after concurrent writes and deletes")
        }
    }

    private static let access = ItemKey(kind: .session, account: "alice", name: "access")
    private static let created = Date(timeIntervalSince1970: 1_700_000_000.123)

    private static func item(_ value: String, expires: Date? = nil) -> StoredItem {
        StoredItem(
            value: SecretBytes(utf8: value), created: created,
            expires: expires.map { Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1_000).rounded() / 1_000) })
    }

    private static func freshAppID() throws -> AppID {
        try AppID("io.github.latchkey.contract.\(UInt64.random(in: 0...UInt64.max))")
    }
}

/// Failures collected from concurrent workers.
private final class ConcurrentFailures: Sendable {
    private let list = Mutex<[String]>([])
    var all: [String] { list.withLock { $0 } }
    func add(_ failure: String) { list.withLock { $0.append(failure) } }
}

/// Turns a failed expectation into a ``CredentialBackendContract/Violation``.
private struct Checker {
    let rule: CredentialBackendContract.Rule

    func expect(_ condition: @autoclosure () throws -> Bool, _ finding: @autoclosure () -> String) throws {
        guard try condition() else { throw CredentialBackendContract.Violation(rule: rule, finding: finding()) }
    }

    /// `read` holds `expected`'s value and times (to the millisecond, the precision stores keep).
    func expectSame(_ read: StoredItem?, _ expected: StoredItem, _ context: String = "") throws {
        let suffix = context.isEmpty ? "" : " (\(context))"
        guard let read else {
            throw CredentialBackendContract.Violation(rule: rule, finding: "the item is missing\(suffix)")
        }
        try expect(read.value == expected.value, "the value differs\(suffix)")
        try expect(abs(read.created.timeIntervalSince(expected.created)) < 0.001, "the creation time differs\(suffix)")
        switch (read.expires, expected.expires) {
        case (nil, nil): break
        case (let got?, let want?): try expect(abs(got.timeIntervalSince(want)) < 0.001, "the expiry differs\(suffix)")
        default:
            try expect(
                false, "the expiry is \(read.expires == nil ? "missing" : "present where none was written")\(suffix)")
        }
    }
}
