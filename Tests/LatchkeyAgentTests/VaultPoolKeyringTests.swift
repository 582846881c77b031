import Foundation
import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeyTestSupport
import Testing

/// The agent's pool on the Secret Service: a vault kept while the process's watch of the bus
/// sees no change, opened anew after one. Any change to the keyring moves the watch, so the
/// suite runs alone on a keyring of its own (`make test`'s pass with
/// `LATCHKEY_DESTRUCTIVE_KEYRING_TESTS=1`), where nothing else writes beside it.
@Suite(
    "agent vault pool: Secret Service vaults kept while the bus watch sees no change", .serialized, .sandboxed,
    .needsSecretService, .destroysKeyring
)
struct VaultPoolKeyringTests {
    let pool: VaultPool
    let storeDirectory: String
    let app = "com.example.kept\(UInt32.random(in: 1...UInt32.max))"

    init() throws {
        try KeyringDaemon.ensureUnlocked()
        let clock = ManualClock()
        pool = VaultPool(now: { clock.now })
        storeDirectory = try TestSandbox.required(for: "the pool's stores").directory("store")
    }

    /// The namespace, on the Secret Service under a policy that keeps vaults, with the unlock mode `unlock`.
    func namespace(unlock: String = "never") throws -> ResolvedNamespace {
        let path = storeDirectory + "/kept.json"
        try """
        {"version": 1, "name": "kept", "backend": {"kind": "secret-service"}, "agent": {"unlockCacheSeconds": 900},
         "secretService": {"unlock": "\(unlock)"}}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return ResolvedNamespace(
            storeDirectory: storeDirectory, app: app, policy: path, backend: nil, sessionUnlock: "never")
    }

    /// One command of `namespace`: its vault from the pool, `body` on it, then its end.
    @discardableResult
    func command<T>(_ namespace: ResolvedNamespace, _ body: (Vault) throws -> T) throws -> T {
        let vault: Vault
        do {
            vault = try pool.vault(for: namespace, passphrase: nil, unlocking: true)
        } catch {
            _ = pool.commandEnded(namespace.queueKey, succeeded: false)
            throw error
        }
        let result = Result { try body(vault) }
        _ = pool.commandEnded(namespace.queueKey, succeeded: (try? result.get()) != nil)?.settle()
        return try result.get()
    }

    func read(_ vault: Vault) throws -> String? {
        try vault.session(named: "api", account: "default").map {
            $0.value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Stores the session `api`, then reads it until the pool keeps the vault (the first command
    /// on the Secret Service starts the watch; one that began under it and saw no change is kept).
    func storedAndKept(_ namespace: ResolvedNamespace) throws -> Vault {
        try command(namespace) { _ = try $0.saveSession(SecretBytes(utf8: "token"), name: "api", account: "default") }
        return try keptAfterReads(namespace)
    }

    /// Reads the session `api` until the pool keeps the vault (a signal of an earlier change
    /// may still arrive during the first read, which is then not kept).
    func keptAfterReads(_ namespace: ResolvedNamespace) throws -> Vault {
        for _ in 0..<3 {
            #expect(try command(namespace, read) == "token")
            if let kept = pool.keptVault(namespace.queueKey) { return kept }
        }
        return try #require(pool.keptVault(namespace.queueKey), "no Secret Service vault was kept")
    }

    @Test(
        "a Secret Service vault is kept after a command that changed nothing, and serves the next command",
        arguments: ["never", "prompt"])
    func kept(unlock: String) throws {
        let namespace = try namespace(unlock: unlock)
        let kept = try storedAndKept(namespace)
        #expect(SecretServiceBackend.busGeneration != nil)
        let next = try pool.vault(for: namespace, passphrase: nil, unlocking: true)
        #expect(next === kept)
        #expect(try read(next) == "token")
        _ = pool.commandEnded(namespace.queueKey, succeeded: true)?.settle()
        #expect(pool.keptVault(namespace.queueKey) === kept)
    }

    @Test(
        "a change another client makes to the keyring: the next command opens the vault anew, and a later one keeps it")
    func changedByAnother() throws {
        let namespace = try namespace()
        let kept = try storedAndKept(namespace)
        let stored = try runProgram(
            "secret-tool", ["store", "--label", "another app's", "app", "com.example.another"], input: "x")
        #expect(stored.status == 0, "\(stored.stderr)")
        let next = try pool.vault(for: namespace, passphrase: nil, unlocking: true)
        #expect(next !== kept)
        #expect(try read(next) == "token")
        _ = pool.commandEnded(namespace.queueKey, succeeded: true)?.settle()
        let keptAgain = try keptAfterReads(namespace)
        #expect(keptAgain !== kept)
        #expect(try pool.vault(for: namespace, passphrase: nil, unlocking: true) === keptAgain)
        _ = pool.commandEnded(namespace.queueKey, succeeded: true)?.settle()
        _ = try runProgram("secret-tool", ["clear", "app", "com.example.another"])
    }

    @Test("a trail key another client deleted: the command fails as a newly opened vault does, not with the key kept")
    func deletedTrailKey() throws {
        let namespace = try namespace()
        _ = try storedAndKept(namespace)
        let clear = try runProgram("secret-tool", ["clear", "app", app, "kind", "key", "name", "audit.secret-service"])
        #expect(clear.status == 0, "\(clear.stderr)")
        let viaPool = #expect(throws: LatchkeyError.self) { try command(namespace, read) }
        #expect(pool.keptVault(namespace.queueKey) == nil)
        let fresh = try Vault.open(
            appID: try AppID(app), policy: try Policy(contentsOfFile: namespace.policy),
            storeDirectory: storeDirectory, unlock: .never)
        let opened = #expect(throws: LatchkeyError.self) { try read(fresh) }
        #expect(viaPool?.code == .tampered)
        #expect(viaPool?.code == opened?.code && viaPool?.message == opened?.message)
    }
}
