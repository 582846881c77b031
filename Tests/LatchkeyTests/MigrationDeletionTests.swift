import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// Issue 34 cases 1 and 2: an acknowledged deletion is never undone by a migration, whoever made it.
@Suite("Deletions during a migration's window", .serialized, .sandboxed, .needsSecretService)
struct MigrationDeletionTests {
    /// A passphrase policy with a fast KDF (the default policy otherwise: logout wipes sessions, keeps the username).
    static let passphrasePolicy = try! Policy(
        jsonData: Array(
            #"{"version": 1, "name": "passphrase-test", "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8}}}"#
                .utf8), source: "test:passphrase")
    static let passphrase = SecretBytes(utf8: "correct horse battery staple")

    enum Deletion: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case logout, sessionDelete, wipe
        var testDescription: String { rawValue }

        /// Runs the deletion; returns how many sessions it reported deleted.
        func run(_ vault: Vault) throws -> Int {
            switch self {
            case .logout: return try vault.logout(account: "alice").wipedSessions.count
            case .sessionDelete: return try vault.deleteSession(named: "access", account: "alice") ? 1 : 0
            case .wipe: return try vault.wipe().wipedSessions.count
            }
        }

        /// The sessions it deletes.
        var deleted: [String] { self == .sessionDelete ? ["access"] : ["access", "refresh"] }
        /// The file copies the migration drops: those sessions, and the username for a wipe.
        var dropped: Int { deleted.count + (self == .wipe ? 1 : 0) }
    }

    /// Opens the namespace on the Secret Service, with or without the passphrase.
    static func online(_ appID: AppID, _ directory: String, passphrase: SecretBytes?) throws -> Vault {
        try Vault.open(
            appID: appID, policy: passphrasePolicy, storeDirectory: directory, backend: nil, passphrase: passphrase,
            secretService: { SecretServiceBackend(appID: appID) })
    }

    @Test(
        "a passphrase vault being migrated: a deletion made without the passphrase is not undone by the next open with it",
        arguments: Deletion.allCases)
    func deletionWithoutPassphrase(deletion: Deletion) throws {
        let appID = try SecretServiceTestSupport.freshAppID("tombstone")
        let directory = try freshDirectory() + "/store"
        let service = SecretServiceBackend(appID: appID)
        defer { _ = try? service.deleteAll() }
        let offline = try Vault.open(
            appID: appID, policy: Self.passphrasePolicy, storeDirectory: directory, backend: nil,
            passphrase: Self.passphrase,
            secretService: { SecretServiceBackend(appID: appID, deadline: .seconds(1), environment: Vault.noBus) })
        #expect(offline.backend.kind == .file)
        try offline.rememberUsername("alice")
        try offline.saveSession(SecretBytes(utf8: "tok-access"), name: "access", account: "alice")
        try offline.saveSession(SecretBytes(utf8: "tok-refresh"), name: "refresh", account: "alice")

        let migrating = try Self.online(appID, directory, passphrase: Self.passphrase)
        #expect(migrating.openReport.migration?.moved == 3)
        #expect(migrating.openReport.migration?.awaitingVerification == true)

        let locked = try Self.online(appID, directory, passphrase: nil)
        #expect(locked.fileVault == nil)
        #expect(try deletion.run(locked) == deletion.deleted.count)
        // The provider then loses the copy's confirmation: only the tombstones can tell a deletion from a loss.
        try service.delete(MigrationRecord.confirmationKey)

        let unlocked = try Self.online(appID, directory, passphrase: Self.passphrase)
        #expect(unlocked.openReport.migration?.moved == 0, "a deleted session was copied back")
        #expect(unlocked.openReport.migration?.droppedDeleted == deletion.dropped)
        #expect(try unlocked.lastUsername() == (deletion == .wipe ? nil : "alice"))
        for name in ["access", "refresh"] {
            let key = ItemKey(kind: .session, account: "alice", name: name)
            let stored = try service.read(key)
            #expect((stored == nil) == deletion.deleted.contains(name), "\(name) after \(deletion)")
            let fileCopy = try unlocked.fileVault.flatMap { try $0.vaultExists() ? try $0.read(key) : nil }
            #expect(fileCopy == nil || !deletion.deleted.contains(name), "the file still holds \(name)")
        }
        // What the tombstones hold names neither the account nor a session.
        let names = try POSIX.directoryEntries(unlocked.namespace.path)
        for name in names where name.hasPrefix("tombstones") {
            let bytes = try POSIX.File.open(unlocked.namespace.file(name), .read).readAll()
            #expect(!String(decoding: bytes, as: UTF8.self).contains("alice"))
        }
        #expect(try unlocked.verifyAudit().allSatisfy { $0.verification.isIntact })
    }

    @Test(
        "during a migration's window, a session another Secret Service client deletes neither comes back nor restarts the window",
        .needsTestSeams)
    func deletionByAnotherClient() throws {
        let (appID, directory, offline) = try Vault.offlineNamespace("otherclient")
        let service = SecretServiceBackend(appID: appID)
        defer { _ = try? service.deleteAll() }
        try offline.saveSession(SecretBytes(utf8: "tok-a"), name: "access", account: "alice")
        try offline.saveSession(SecretBytes(utf8: "tok-r"), name: "refresh", account: "alice")
        #expect(
            try VaultTests.openInAnotherProcess(appID, directory) == "moved=2 keptNewer=0 destroyed=0 awaiting=1")

        // Seahorse or `secret-tool clear`: another client deletes one session.
        let clear = try runProgram(
            "secret-tool", ["clear", "app", appID.rawValue, "kind", "session", "name", "access"])
        #expect(clear.status == 0, "\(clear.stderr)")
        let key = ItemKey(kind: .session, account: "alice", name: "access")
        #expect(try service.read(key) == nil)

        let next = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
        #expect(next.openReport.migration?.moved == 0, "the deleted session was copied back")
        #expect(next.openReport.migration?.droppedDeleted == 1)
        #expect(try next.session(named: "access", account: "alice") == nil)
        #expect(try next.session(named: "refresh", account: "alice")?.value == SecretBytes(utf8: "tok-r"))
        // The window did not start over: a later process past the minimum age of the first copy ends it.
        #expect(
            try VaultTests.openInAnotherProcess(appID, directory, minimumAge: 0)
                == "moved=0 keptNewer=0 destroyed=1 awaiting=0")
        let after = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
        #expect(try after.session(named: "access", account: "alice") == nil)
        #expect(try after.verifyAudit().allSatisfy { $0.verification.isIntact })
    }
}
