import Foundation
import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeyTestSupport
import Testing

/// The agent's pool of open vaults, on real passphrase-protected file vaults in the test's
/// sandbox, with a manual clock: what it keeps, for how long, and what it refuses.
@Suite("agent vault pool: one open vault per namespace", .sandboxed)
struct VaultPoolTests {
    let clock = ManualClock()
    let pool: VaultPool
    let storeDirectory: String
    let right = SecretBytes(utf8: "correct horse")
    let wrong = SecretBytes(utf8: "wrong horse")

    init() throws {
        let clock = clock
        pool = VaultPool(now: { clock.now })
        storeDirectory = try TestSandbox.required(for: "the pool's stores").directory("store")
    }

    /// Writes the policy `name` (a passphrase-protected file vault with a cheap KDF, caching `cache` seconds).
    func policy(_ name: String = "cached", cache: Int = 900) throws -> String {
        let path = storeDirectory + "/\(name).json"
        try """
        {"version": 1, "name": "\(name)", "backend": {"kind": "file"},
         "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8}},
         "agent": {"unlockCacheSeconds": \(cache)}}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func namespace(_ policy: String, app: String = "com.example.pool") -> ResolvedNamespace {
        ResolvedNamespace(
            storeDirectory: storeDirectory, app: app, policy: policy, backend: nil, sessionUnlock: "never")
    }

    /// One command of `namespace`: its vault from the pool, `body` on it, then its end.
    @discardableResult
    func command<T>(
        _ namespace: ResolvedNamespace, passphrase: SecretBytes? = nil, _ body: (Vault) throws -> T
    ) throws -> T {
        let vault: Vault
        do {
            vault = try pool.vault(for: namespace, passphrase: passphrase, unlocking: true)
        } catch {
            _ = pool.commandEnded(namespace.queueKey, succeeded: false)
            throw error
        }
        let result = Result { try body(vault) }
        let deferred = pool.commandEnded(namespace.queueKey, succeeded: (try? result.get()) != nil)
        _ = deferred?.settle()
        return try result.get()
    }

    /// Stores a session `api` holding `token` with the passphrase given.
    func store(_ namespace: ResolvedNamespace, _ token: String = "t") throws {
        try command(namespace, passphrase: right) {
            try $0.saveSession(SecretBytes(utf8: token), name: "api", account: "default")
        }
    }

    func read(_ namespace: ResolvedNamespace, passphrase: SecretBytes? = nil) throws -> String? {
        try command(namespace, passphrase: passphrase) { vault in
            try vault.session(named: "api", account: "default").map {
                $0.value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            }
        }
    }

    func expectWrongKey(_ body: () throws -> Void) {
        #expect {
            try body()
        } throws: {
            ($0 as? LatchkeyError)?.code == .wrongKey
        }
    }

    @Test("two commands of a namespace use the same vault, its audit appends deferred until settled")
    func sameVault() throws {
        let namespace = namespace(try policy())
        let first = try pool.vault(for: namespace, passphrase: right, unlocking: true)
        _ = try first.saveSession(SecretBytes(utf8: "t"), name: "api", account: "default")
        #expect(first.auditDurability == .deferred)
        #expect(pool.commandEnded(namespace.queueKey, succeeded: true) != nil)
        let second = try pool.vault(for: namespace, passphrase: nil, unlocking: true)
        #expect(second === first)
        _ = pool.commandEnded(namespace.queueKey, succeeded: true)
        #expect(try read(namespace) == "t")
    }

    @Test("a held passphrase and its vault go when the cache time is up, not before")
    func expiry() throws {
        let namespace = namespace(try policy(cache: 60))
        try store(namespace)
        clock.advance(by: .seconds(59))
        #expect(try read(namespace) == "t")
        // Each command that uses the vault holds it for the cache time again.
        clock.advance(by: .seconds(59))
        #expect(pool.keptVault(namespace.queueKey) != nil)
        #expect(pool.held.map(\.passphrase) == [true])
        clock.advance(by: .seconds(1))
        #expect(pool.keptVault(namespace.queueKey) == nil)
        #expect(pool.held.isEmpty)
        expectWrongKey { _ = try read(namespace) }
    }

    @Test("lock drops every vault and passphrase, and counts the passphrases")
    func lock() throws {
        let policy = try policy()
        let one = namespace(policy, app: "com.example.one")
        let two = namespace(policy, app: "com.example.two")
        try store(one)
        try store(two)
        #expect(pool.forgetAll() == 2)
        #expect(pool.keptVault(one.queueKey) == nil && pool.keptVault(two.queueKey) == nil)
        expectWrongKey { _ = try read(one) }
        expectWrongKey { _ = try read(two) }
    }

    @Test("a command that began before lock keeps nothing")
    func lockDuringCommand() throws {
        let namespace = namespace(try policy())
        _ = try pool.vault(for: namespace, passphrase: right, unlocking: true)
            .saveSession(SecretBytes(utf8: "t"), name: "api", account: "default")
        pool.forgetAll()
        _ = pool.commandEnded(namespace.queueKey, succeeded: true)
        #expect(pool.keptVault(namespace.queueKey) == nil)
        expectWrongKey { _ = try read(namespace) }
    }

    @Test("a wrong passphrase given is refused while the right one is held, which stays held")
    func wrongGiven() throws {
        let namespace = namespace(try policy())
        try store(namespace)
        let kept = try #require(pool.keptVault(namespace.queueKey))
        expectWrongKey { _ = try read(namespace, passphrase: wrong) }
        #expect(pool.keptVault(namespace.queueKey) === kept)
        #expect(try read(namespace) == "t")
        #expect(try read(namespace, passphrase: right) == "t")
    }

    @Test("a vault file replaced by another (another salt) is never opened with the held passphrase")
    func replacedFile() throws {
        let policyPath = try policy()
        let namespace = namespace(policyPath)
        try store(namespace)
        let path = try #require(pool.keptVault(namespace.queueKey)?.fileVaultPath)
        try FileManager.default.removeItem(atPath: path)
        // Another process makes a new vault under the same passphrase: a new salt.
        let other = try Vault.open(
            appID: try AppID(namespace.app), policy: try Policy(contentsOfFile: policyPath),
            storeDirectory: storeDirectory, passphrase: right)
        _ = try other.saveSession(SecretBytes(utf8: "other"), name: "api", account: "default")
        expectWrongKey { _ = try read(namespace) }
        // The passphrase is forgotten with its vault; given again, it opens the new vault.
        #expect(pool.keptVault(namespace.queueKey) == nil)
        expectWrongKey { _ = try read(namespace) }
        #expect(try read(namespace, passphrase: right) == "other")
        #expect(try read(namespace) == "other")
    }

    @Test("after the vault file is deleted, the held passphrase never creates a new one")
    func deletedFile() throws {
        let namespace = namespace(try policy())
        try store(namespace)
        let path = try #require(pool.keptVault(namespace.queueKey)?.fileVaultPath)
        try FileManager.default.removeItem(atPath: path)
        expectWrongKey {
            try command(namespace) { _ = try $0.saveSession(SecretBytes(utf8: "new"), name: "api", account: "default") }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a policy changed between two commands opens a new vault, which replaces the entry")
    func policyChange() throws {
        let policyPath = try policy(cache: 900)
        let namespace = namespace(policyPath)
        try store(namespace)
        let before = try #require(pool.keptVault(namespace.queueKey))
        _ = try policy(cache: 600)
        let after = try pool.vault(for: namespace, passphrase: nil, unlocking: true)
        #expect(after !== before)
        _ = pool.commandEnded(namespace.queueKey, succeeded: true)
        #expect(pool.keptVault(namespace.queueKey) === after)
        // Kept for the new policy's time.
        clock.advance(by: .seconds(600))
        #expect(pool.keptVault(namespace.queueKey) == nil)
    }

    @Test("a policy that caches nothing keeps no vault past its command, and leaves another policy's entry alone")
    func noCache() throws {
        let cached = namespace(try policy())
        try store(cached)
        let kept = try #require(pool.keptVault(cached.queueKey))
        let strict = namespace(try policy("strict", cache: 0))
        expectWrongKey { _ = try read(strict) }
        #expect(try read(strict, passphrase: right) == "t")
        #expect(pool.keptVault(cached.queueKey) === kept)
        #expect(try read(cached) == "t")
    }

    @Test("a vault whose command failed is not kept; its passphrase still is")
    func failedCommand() throws {
        let namespace = namespace(try policy())
        try store(namespace)
        let kept = try #require(pool.keptVault(namespace.queueKey))
        _ = try pool.vault(for: namespace, passphrase: nil, unlocking: true)
        _ = pool.commandEnded(namespace.queueKey, succeeded: false)
        #expect(pool.keptVault(namespace.queueKey) == nil)
        #expect(try read(namespace) == "t")
        #expect(pool.keptVault(namespace.queueKey) !== kept)
    }

    @Test(
        "within a silence window the pool opens no vault its policy puts on the Secret Service, and opens a file vault"
    )
    func silenceRefusesSecretService() throws {
        let missed = LatchkeyError(.timedOut, "the Secret Service did not answer")
        let path = storeDirectory + "/service.json"
        try #"{"version": 1, "name": "service", "backend": {"kind": "secret-service"}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try pool.vault(for: namespace(path), passphrase: nil, unlocking: true, failingFastWith: missed)
        } throws: {
            ($0 as? VaultPool.FailedFast)?.failure.message == missed.message
        }
        _ = pool.commandEnded(namespace(path).queueKey, succeeded: false)
        let file = namespace(try policy())
        let vault = try pool.vault(for: file, passphrase: right, unlocking: true, failingFastWith: missed)
        #expect(vault.openReport.backend == .file)
        _ = pool.commandEnded(file.queueKey, succeeded: true)
    }

    @Test("after a missed deadline its namespace fails fast for as long as that deadline, and no other")
    func silenceWindow() throws {
        let failure = LatchkeyError(.timedOut, "the Secret Service did not answer")
        pool.silence("a", for: .seconds(3), failingWith: failure)
        #expect(pool.silentFailure(of: "a")?.message == failure.message)
        #expect(pool.silentFailure(of: "b") == nil)
        clock.advance(by: .seconds(3) - .milliseconds(1))
        #expect(pool.silentFailure(of: "a")?.code == .timedOut)
        clock.advance(by: .milliseconds(1))
        #expect(pool.silentFailure(of: "a") == nil)
    }
}
