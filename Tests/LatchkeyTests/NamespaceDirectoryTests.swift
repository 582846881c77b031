import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("One directory per namespace")
struct NamespaceDirectoryTests {
    /// Opens a file vault (key file) of `app` in `store`, as no Secret Service were running.
    static func open(_ app: String, _ store: String) throws -> Vault {
        try Vault.withoutSecretService(appID: AppID(app), policy: .default, storeDirectory: store, backend: .file)
    }

    @Test(
        "app ids that end like Latchkey's own suffixes never share a file: wiping one leaves the other whole",
        arguments: ["a.file.audit", "a.secret-service.audit", "a.vault", "a.key"])
    func noCollisions(other: String) throws {
        let store = try freshDirectory() + "/store"
        let first = try Self.open("a", store)
        let second = try Self.open(other, store)
        _ = try first.saveSession(SecretBytes(utf8: "one"), name: "s", account: "x")
        _ = try second.saveSession(SecretBytes(utf8: "two"), name: "s", account: "x")
        #expect(try POSIX.directoryEntries(store).sorted() == ["a.d", other + ".d"].sorted())

        _ = try second.wipe()
        #expect(try first.session(named: "s", account: "x")?.value == SecretBytes(utf8: "one"))
        #expect(try first.verifyAudit().allSatisfy { $0.verification.isIntact })
        let trailLock = NamespaceDirectory(appID: try AppID("a"), storeDirectory: store).trailLockPath(.file)
        #expect(try POSIX.status(of: trailLock) != nil, "the other namespace's wipe removed this one's audit lock")
    }

    /// The flat layout of earlier versions: every file of the namespace in the
    /// store directory under `<appid>.<suffix>`, made here by moving a new
    /// namespace's files to those names in another store.
    static func flatten(_ app: String, from source: String, into store: String, keep: Set<String> = []) throws {
        let namespace = NamespaceDirectory(appID: try AppID(app), storeDirectory: source)
        let names = [
            ("credentials.vault", ".vault"), ("credentials.key", ".key"), ("audit-keys.vault", "+audit.vault"),
            ("audit-keys.key", "+audit.key"), ("audit.file.jsonl", ".file.audit.jsonl"),
            ("audit.file.anchor", ".file.audit.anchor"),
        ]
        try PrivateFiles.prepareDirectory(store)
        let target = NamespaceDirectory(appID: try AppID(app), storeDirectory: store)
        for (new, old) in names {
            if keep.contains(new) {
                try PrivateFiles.prepareDirectory(target.path)
                #expect(rename(namespace.file(new), target.file(new)) == 0)
            } else {
                #expect(rename(namespace.file(new), store + "/" + app + old) == 0)
            }
        }
    }

    @Test(
        "a namespace in the earlier flat layout is moved into its directory on first use, sessions and trail intact",
        arguments: [Set<String>(), ["credentials.vault", "audit-keys.key"]])
    func upgradesFlatLayout(alreadyMoved: Set<String>) throws {
        let base = try freshDirectory()
        let original = try Self.open("com.example.old", base + "/source")
        _ = try original.saveSession(SecretBytes(utf8: "kept"), name: "access", account: "alice")
        try Self.flatten("com.example.old", from: base + "/source", into: base + "/store", keep: alreadyMoved)

        let upgraded = try Self.open("com.example.old", base + "/store")
        #expect(try upgraded.session(named: "access", account: "alice")?.value == SecretBytes(utf8: "kept"))
        #expect(try upgraded.verifyAudit().allSatisfy { $0.verification.isIntact })
        #expect(try upgraded.auditEntries().map(\.event).contains(.sessionSaved), "the old trail continues")
        #expect(try POSIX.directoryEntries(base + "/store") == ["com.example.old.d"])
    }

    @Test("a file under both its old and its new name is refused, naming both, and nothing is overwritten")
    func refusesConflict() throws {
        let base = try freshDirectory()
        let original = try Self.open("com.example.both", base + "/source")
        _ = try original.saveSession(SecretBytes(utf8: "v"), name: "access", account: "")
        try Self.flatten("com.example.both", from: base + "/source", into: base + "/store")
        let namespace = NamespaceDirectory(appID: try AppID("com.example.both"), storeDirectory: base + "/store")
        try PrivateFiles.prepareDirectory(namespace.path)
        try PrivateFiles.replace(namespace.file("credentials.vault"), with: [1, 2, 3])
        let error = #expect(throws: LatchkeyError.self) {
            _ = try Self.open("com.example.both", base + "/store").sessions()
        }
        #expect(error?.code == .invalidInput)
        #expect(
            error?.message.contains("com.example.both.vault") == true
                && error?.message.contains("credentials.vault") == true)
        #expect(try fileBytes(namespace.file("credentials.vault")) == [1, 2, 3])
    }
}
