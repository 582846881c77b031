import Foundation
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import Latchkey

/// Tests that lock, stop or kill the real gnome-keyring-daemon. They would break
/// every other test running beside them, so they run only in `make test`'s second
/// pass, alone, on a fresh private bus and daemon
/// (`LATCHKEY_DESTRUCTIVE_KEYRING_TESTS=1`), one after another.
@Suite(
    "Secret Service with a locked, hung or killed daemon", .serialized, .sandboxed, .needsSecretService,
    .destroysKeyring)
struct SecretServiceDestructiveTests {
    static let deadline = Duration.seconds(1)
    /// Deadline plus a margin: a correctness bound (no hang), not a speed benchmark.
    static let bound = Duration.seconds(3)
    static let allowedAfterKill: Set<LatchkeyError.Code> = [.unavailable, .locked, .timedOut]

    init() throws {
        try Daemon.ensureUnlocked()
    }

    @Test("an audited read writes nothing to the Secret Service: the keyring file stays byte for byte the same")
    func readWritesNothing() throws {
        let appID = try SecretServiceTestSupport.freshAppID("quietread")
        let directory = try freshDirectory() + "/store"
        let writer = try Vault.open(appID: appID, storeDirectory: directory, backend: .secretService)
        try writer.rememberUsername("alice")
        try writer.saveSession(SecretBytes(utf8: "token"), name: "access", account: "alice")
        let keyrings = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]! + "/keyrings"
        func keyringFiles() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: keyrings) {
                files[name] = FileManager.default.contents(atPath: keyrings + "/" + name)
            }
            return files
        }
        let before = try keyringFiles()
        #expect(!before.isEmpty)
        // A new vault, as a new process opens it: nothing read or cached yet.
        let reader = try Vault.open(appID: appID, storeDirectory: directory, backend: .secretService)
        #expect(try reader.session(named: "access", account: "alice")?.value == SecretBytes(utf8: "token"))
        #expect(try reader.lastUsername() == "alice")
        #expect(try keyringFiles() == before)
        #expect(try reader.auditEntries().last?.event == .sessionRead)
        #expect(try reader.verifyAudit().allSatisfy { $0.verification.isIntact })
        try reader.wipe()
        try SecretServiceBackend(appID: appID).deleteAll()
    }

    @Test(
        "a Secret Service with no default collection is unavailable unless unlock is prompt: auto falls back visibly, a required one is 69, prompt asks the provider to create one"
    )
    func noDefaultCollection() throws {
        let appID = try SecretServiceTestSupport.freshAppID("nodefault")
        let directory = try freshDirectory() + "/store"
        // gnome-keyring with no keyring at all: no login collection, the default alias unset
        // (as KWallet with no wallet). Unsetting the alias of a running one does not do: its
        // ReadAlias("default") answers "login" whatever SetAlias said.
        try Daemon.restartWithoutKeyrings(dataHome: try freshDirectory() + "/empty-data")
        defer { try? Daemon.restartUnlocked() }

        let fellBack = try Vault.open(appID: appID, storeDirectory: directory, backend: .auto, unlock: .never)
        #expect(fellBack.openReport.backend == .file)
        let reason = try #require(fellBack.openReport.secretServiceUnavailable)
        #expect(reason.contains("no default collection"), "\(reason)")
        try fellBack.saveSession(SecretBytes(utf8: "tok"), name: "access", account: "alice")
        #expect(try fellBack.status().backend == .file)

        let required = SecretServiceTestSupport.failure {
            _ = try Vault.open(appID: appID, storeDirectory: directory, backend: .secretService, unlock: .never)
        }
        #expect(required.error?.code == .unavailable, "\(String(describing: required.error))")
        #expect(required.error?.message.contains("no default collection") == true)

        // With prompt the provider is asked to create it; its prompter has no display here.
        let prompted = SecretServiceTestSupport.failure {
            _ = try Vault.open(appID: appID, storeDirectory: directory, backend: .auto, unlock: .prompt)
        }
        #expect(
            prompted.error?.code == .locked, "\(String(describing: prompted.error)) \(prompted.error?.message ?? "")")
        #expect(prompted.error?.message.contains("create") == true, "\(String(describing: prompted.error))")
        #expect(try Daemon.defaultAlias() == "/")

        try Daemon.restartUnlocked()
        let back = try Vault.open(appID: appID, storeDirectory: directory, backend: .auto, unlock: .never)
        #expect(back.openReport.backend == .secretService)
        #expect(try back.session(named: "access", account: "alice")?.value == SecretBytes(utf8: "tok"))
        try back.wipe()
    }

    @Test("a locked collection gives locked within the deadline for every operation, and no prompt is awaited")
    func lockedCollection() throws {
        let (backend, key, item) = try Self.backendWithItem("locked")
        let fresh = SecretServiceBackend(
            appID: try SecretServiceTestSupport.freshAppID("locked-fresh"), deadline: Self.deadline)

        try Daemon.lockLogin()
        #expect(try Daemon.isLoginLocked())

        let operations: [(String, () throws -> Void)] = [
            ("read", { _ = try backend.read(key) }),
            ("write", { try backend.write(item, for: key) }),
            ("write to an app without a pseudonym key yet", { try fresh.write(item, for: key) }),
            ("list", { _ = try backend.list(kind: nil) }),
            ("delete", { try backend.delete(key) }),
            ("deleteAll", { try backend.deleteAll() }),
        ]
        for (name, operation) in operations {
            let outcome = SecretServiceTestSupport.failure(operation)
            #expect(outcome.error?.code == .locked, "\(name): \(String(describing: outcome.error))")
            #expect(outcome.elapsed < Self.bound, "\(name) took \(outcome.elapsed)")
        }
        #expect(try Daemon.isLoginLocked(), "Latchkey must not unlock")

        try Daemon.restartUnlocked()
        #expect(try Self.eventually { try backend.read(key) } == item)
        try backend.deleteAll()
    }

    @Test("a hung daemon gives timedOut within the deadline, also to callers queued behind it")
    func hungDaemon() async throws {
        let (backend, key, item) = try Self.backendWithItem("hung")

        let pid = try Daemon.pid()
        #expect(kill(pid, SIGSTOP) == 0)
        let outcomes = try await withThrowingTaskGroup(of: (LatchkeyError?, Duration).self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try await SecretServiceTestSupport.onOwnThread {
                        let outcome = SecretServiceTestSupport.failure { _ = try backend.read(key) }
                        return (outcome.error, outcome.elapsed)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(kill(pid, SIGCONT) == 0)
        for (error, elapsed) in outcomes {
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(elapsed < Self.bound, "took \(elapsed)")
        }
        #expect(try Self.eventually { try backend.read(key) } == item)
        try backend.deleteAll()
    }

    @Test("a vault operation on a hung daemon costs one deadline in all, its audit entry included")
    func hungDaemonOneDeadline() throws {
        let directory = try freshDirectory()
        let policy = try Policy(
            jsonData: Array(
                #"{"version": 1, "name": "slow", "backend": {"kind": "secret-service", "secretServiceTimeoutMilliseconds": 1500}}"#
                    .utf8), source: "test")
        let vault = try Self.eventually {
            try Vault.open(
                appID: SecretServiceTestSupport.freshAppID("one-deadline"), policy: policy, storeDirectory: directory)
        }
        let pid = try Daemon.pid()
        #expect(kill(pid, SIGSTOP) == 0)
        let outcome = SecretServiceTestSupport.failure { _ = try vault.session(named: "access", account: "someone") }
        #expect(kill(pid, SIGCONT) == 0)
        #expect(outcome.error?.code == .timedOut, "\(String(describing: outcome.error))")
        // Twice the deadline (3 s) is what waiting again for the failure's audit entry costs.
        #expect(outcome.elapsed < .milliseconds(2500), "took \(outcome.elapsed)")
        _ = try Self.eventually { try vault.sessions(account: nil) }
    }

    @Test("the daemon killed mid-test gives unavailable, locked or timedOut within the deadline, never a hang")
    func killedDaemon() async throws {
        let (backend, key, item) = try Self.backendWithItem("killed")
        let pid = try Daemon.pid()

        // A writer keeps going while the daemon is killed under it, and for 10 writes after the kill.
        let progress = Mutex((writes: 0, killedAt: Int?.none))
        let writer = Task {
            try await SecretServiceTestSupport.onOwnThread {
                var outcomes: [(LatchkeyError?, Duration)] = []
                var index = 0
                while progress.withLock({ $0.killedAt.map { index < $0 + 10 } ?? true }) {
                    outcomes.append(
                        SecretServiceTestSupport.failure {
                            try backend.write(
                                StoredItem(value: SecretBytes(utf8: "w\(index)")),
                                for: ItemKey(kind: .session, name: "w\(index % 40)"))
                        })
                    index += 1
                    progress.withLock { $0.writes = index }
                }
                return outcomes
            }
        }
        while progress.withLock({ $0.writes }) < 10 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(kill(pid, SIGKILL) == 0)
        progress.withLock { $0.killedAt = $0.writes }
        let outcomes = try await writer.value

        let failures = outcomes.compactMap { $0.0 }
        #expect(!failures.isEmpty, "writes after the kill cannot all have succeeded")
        for (error, elapsed) in outcomes {
            if let error { #expect(Self.allowedAfterKill.contains(error.code), "\(error)") }
            #expect(elapsed < Self.bound, "took \(elapsed)")
        }
        // A write cut off by the kill may have gone unanswered for the whole deadline;
        // then the backend does not ask again for one deadline. Past that, the calls
        // below reach D-Bus, which activates a new daemon.
        try await Task.sleep(for: Self.deadline + .milliseconds(200))
        let later: [(String, () throws -> Void)] = [
            ("read", { _ = try backend.read(key) }),
            ("list", { _ = try backend.list(kind: nil) }),
            ("write", { try backend.write(item, for: key) }),
        ]
        for (name, operation) in later {
            let outcome = SecretServiceTestSupport.failure(operation)
            #expect(
                outcome.error.map { Self.allowedAfterKill.contains($0.code) } == true,
                "\(name): \(String(describing: outcome.error))")
            #expect(outcome.elapsed < Self.bound, "\(name) took \(outcome.elapsed)")
        }

        #expect(
            try Daemon.pid() != pid && Daemon.isLoginLocked(), "D-Bus re-activated a daemon, whose keyring is locked")

        try Daemon.restartUnlocked()
        #expect(try Self.eventually { try backend.read(key) } == item, "the item written before the kill survives")
        try backend.deleteAll()
    }

    /// A backend with a short deadline for a fresh namespace, holding one item.
    static func backendWithItem(_ purpose: String) throws -> (SecretServiceBackend, ItemKey, StoredItem) {
        let backend = SecretServiceBackend(appID: try SecretServiceTestSupport.freshAppID(purpose), deadline: deadline)
        let key = ItemKey(kind: .session, account: "account-\(purpose)", name: "access")
        let item = StoredItem(value: SecretBytes(utf8: "written before the daemon was disturbed"))
        try eventually { try backend.write(item, for: key) }
        return (backend, key, item)
    }

    /// The value of the first of a few attempts that does not fail: the first call
    /// after a daemon restart may meet the old, stale connection.
    /// After a call that timed out, a backend does not ask again for one deadline,
    /// so the attempts are spread over a little more than that.
    static func eventually<Value>(_ body: () throws -> Value) throws -> Value {
        var lastError: (any Error)?
        for _ in 0..<10 {
            do { return try body() } catch { lastError = error }
            Thread.sleep(forTimeInterval: 0.4)
        }
        throw lastError!
    }

    /// The test session's gnome-keyring-daemon (Tests/Support).
    typealias Daemon = KeyringDaemon
}
