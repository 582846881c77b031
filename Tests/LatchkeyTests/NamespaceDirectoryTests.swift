import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("One directory per namespace", .sandboxed)
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
}
