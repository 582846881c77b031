import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// What a kept Secret Service backend (one used for several commands, as the agent keeps
/// it) does, as a command would use it: the checks a vault makes when it opens, then a read.
enum KeptBackend {
    /// One command on `backend`: ``SecretServiceBackend/beginCommand()``, the checks of
    /// a vault's opening, then the read of `key`.
    static func command(_ backend: SecretServiceBackend, reading key: ItemKey) throws -> StoredItem? {
        backend.beginCommand()
        try backend.checkAvailability()
        try backend.checkDefaultCollection()
        return try backend.read(key)
    }

    /// A backend of a fresh namespace holding `value` under `key`, kept for three commands,
    /// so that it follows the bus and has learnt where its items are.
    static func prepared(_ purpose: String, _ key: ItemKey, _ value: String, deadline: Duration = .seconds(3)) throws
        -> SecretServiceBackend
    {
        let backend = SecretServiceBackend(
            appID: try SecretServiceTestSupport.freshAppID(purpose), deadline: deadline)
        try backend.write(StoredItem(value: SecretBytes(utf8: value)), for: key)
        for _ in 0..<3 { #expect(try command(backend, reading: key)?.value == SecretBytes(utf8: value)) }
        #expect(LibSecret.watchGeneration != nil, "the kept backend does not follow the bus")
        return backend
    }

    /// Runs `program` and waits for it; throws when it fails.
    static func run(_ program: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSupportError("\(program) \(arguments) exited with \(process.terminationStatus)")
        }
    }

    /// Whether the watch's generation moves within a few seconds of `start` (signals arrive
    /// on GDBus's worker thread, a moment after the change).
    static func generationMoved(from start: UInt64?) -> Bool {
        let clock = ContinuousClock()
        let begin = clock.now
        while clock.now - begin < .seconds(5) {
            if LibSecret.watchGeneration != start { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }
}

@Suite("Secret Service backend kept open: follows the bus", .serialized, .sandboxed, .needsSecretService)
struct SecretServiceWatchTests {
    let key = ItemKey(kind: .session, account: "alice", name: "api")

    @Test("a backend used for one command only does not follow the bus")
    func oneCommandDoesNotWatch() async throws {
        try await SecretServiceTestSupport.withBackend("watch-once") { backend in
            try await SecretServiceTestSupport.onOwnThread { [key] in
                try backend.checkAvailability()
                try backend.write(StoredItem(value: SecretBytes(utf8: "one")), for: key)
                #expect(try backend.read(key)?.value == SecretBytes(utf8: "one"))
                #expect(try backend.read(key)?.value == SecretBytes(utf8: "one"))
            }
            #expect(!backend.followsBus)
        }
    }

    @Test("an item another client deletes (secret-tool clear) between two reads of a kept backend reads as absent")
    func deletedByAnotherClient() async throws {
        try await SecretServiceTestSupport.onOwnThread { [key] in
            let backend = try KeptBackend.prepared("watch-deleted", key, "before")
            defer { try? backend.deleteAll() }
            let generation = LibSecret.watchGeneration
            try KeptBackend.run(
                "/usr/bin/secret-tool",
                ["clear", "xdg:schema", SecretServiceAttributes.schemaName, "app", backend.appID.rawValue])
            #expect(KeptBackend.generationMoved(from: generation), "the deletion's signal was not seen")
            #expect(try KeptBackend.command(backend, reading: key) == nil)
        }
    }

    @Test("an item another client changes between two reads of a kept backend reads with its new value")
    func changedByAnotherClient() async throws {
        try await SecretServiceTestSupport.onOwnThread { [key] in
            let backend = try KeptBackend.prepared("watch-changed", key, "before")
            defer { try? backend.deleteAll() }
            // gnome-keyring signals no change for a new secret (Item.SetSecret): the item stays
            // where it was, and its secret is read from the service on every read.
            let other = SecretServiceBackend(appID: backend.appID, deadline: backend.deadline)
            try other.write(StoredItem(value: SecretBytes(utf8: "after")), for: key)
            #expect(try KeptBackend.command(backend, reading: key)?.value == SecretBytes(utf8: "after"))
            // Learnt again, the next commands read the new value too.
            #expect(try KeptBackend.command(backend, reading: key)?.value == SecretBytes(utf8: "after"))
        }
    }
}

/// A kept backend when another client locks the collection or the daemon is replaced: they
/// lock or restart the test session's daemon, so they run with the other destructive tests,
/// one after another (`make test`'s pass with `LATCHKEY_DESTRUCTIVE_KEYRING_TESTS=1`).
extension SecretServiceDestructiveTests {
    static let watchedKey = ItemKey(kind: .session, account: "bob", name: "api")

    @Test("a collection another client locks (Lock over D-Bus) makes a kept backend's next read fail as locked")
    func lockedByAnotherClient() async throws {
        try await SecretServiceTestSupport.onOwnThread {
            let key = Self.watchedKey
            let backend = try KeptBackend.prepared("watch-locked", key, "value", deadline: .seconds(1))
            let generation = LibSecret.watchGeneration
            try KeyringDaemon.lockLogin()
            defer { try? KeyringDaemon.ensureUnlocked() }
            #expect(KeptBackend.generationMoved(from: generation), "the lock's signal was not seen")
            let outcome = SecretServiceTestSupport.failure { _ = try KeptBackend.command(backend, reading: key) }
            #expect(outcome.error?.code == .locked, "\(String(describing: outcome.error))")
            let fresh = SecretServiceBackend(appID: backend.appID, deadline: backend.deadline)
            let inProcess = SecretServiceTestSupport.failure {
                try fresh.checkAvailability()
                try fresh.checkDefaultCollection()
                _ = try fresh.read(key)
            }
            #expect(outcome.error?.message == inProcess.error?.message)
            try KeyringDaemon.ensureUnlocked()
            #expect(try KeptBackend.command(backend, reading: key)?.value == SecretBytes(utf8: "value"))
            try backend.deleteAll()
        }
    }

    @Test("a kept backend follows the daemon replaced (gnome-keyring restarted) and reads from the new one")
    func daemonReplaced() async throws {
        try await SecretServiceTestSupport.onOwnThread {
            let key = Self.watchedKey
            let backend = try KeptBackend.prepared("watch-replaced", key, "value")
            let generation = LibSecret.watchGeneration
            try KeyringDaemon.restartUnlocked()
            #expect(KeptBackend.generationMoved(from: generation), "the owner change was not seen")
            #expect(try KeptBackend.command(backend, reading: key)?.value == SecretBytes(utf8: "value"))
            let other = SecretServiceBackend(appID: backend.appID, deadline: backend.deadline)
            try other.write(StoredItem(value: SecretBytes(utf8: "new daemon")), for: key)
            #expect(try KeptBackend.command(backend, reading: key)?.value == SecretBytes(utf8: "new daemon"))
            try backend.deleteAll()
        }
    }
}
