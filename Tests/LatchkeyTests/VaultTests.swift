import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Vault", .sandboxed)
struct VaultTests {
    @Test(
        "opt-out: remember, opt out erases at once, remember is skipped, opt in, remember again",
        arguments: TestedStore.allCases)
    func optOutSequence(store: TestedStore) async throws {
        let vault = try store.open()
        try await vault.rememberUsername("alice")
        #expect(try await vault.lastUsername() == "alice")
        try await vault.setUsernameMemoryAllowed(false)
        #expect(try await vault.lastUsername() == nil)
        #expect(try vault.storedKeys([.username]).isEmpty, "the backend still holds a username item")
        let skipped = try await vault.rememberUsername("bob")
        #expect(skipped.reason?.contains("turned off") == true)
        #expect(try vault.storedKeys([.username]).isEmpty)
        try await vault.setUsernameMemoryAllowed(true)
        try await vault.rememberUsername("bob")
        #expect(try await vault.lastUsername() == "bob")
        let events = try await vault.auditEntries().map(\.event)
        #expect(
            events == [.usernameRemembered, .rememberDisabled, .usernameSkipped, .rememberEnabled, .usernameRemembered])
    }

    @Test(
        "a session whose expiry has passed is refused, naming the session, and nothing is stored",
        arguments: TestedStore.allCases)
    func pastExpiry(store: TestedStore) throws {
        let vault = try store.open()
        let refused = #expect(throws: LatchkeyError.self) {
            try vault.saveSession(
                SecretBytes(utf8: "dead"), name: "access", account: "alice", expires: Date().addingTimeInterval(-1))
        }
        #expect(refused?.code == .invalidInput && refused?.message.contains("'access'") == true)
        #expect(try vault.storedKeys([.session]).isEmpty)
    }

    @Test(
        "after opting out, the remembered username is gone but the live session still names its account",
        arguments: TestedStore.allCases)
    func activeAccountAfterOptOut(store: TestedStore) async throws {
        let vault = try store.open()
        #expect(try await vault.activeAccount() == nil)
        try await vault.rememberUsername("alice")
        try await vault.saveSession(SecretBytes(utf8: "a"), name: "access", account: "alice")
        try await Task.sleep(for: .milliseconds(20))
        try await vault.saveSession(SecretBytes(utf8: "b"), name: "access", account: "bob")
        try await vault.setUsernameMemoryAllowed(false)
        #expect(try await vault.lastUsername() == nil)
        #expect(try await vault.activeAccount() == "bob", "the newest session with an account")
        try await vault.logout(account: "bob")
        #expect(try await vault.activeAccount() == "alice")
    }

    @Test("a policy that forbids remembering wins over the user's setting", arguments: TestedStore.allCases)
    func policyForbids(store: TestedStore) throws {
        let vault = try store.open(policy: .sharedDevice)
        #expect(try vault.isUsernameMemoryAllowed())
        let decision = try vault.rememberUsername("alice")
        #expect(decision.reason?.contains("forbids remembering") == true)
        #expect(try vault.lastUsername() == nil)
    }

    @Test("default logout keeps the username and leaves no session of that account", arguments: TestedStore.allCases)
    func defaultLogout(store: TestedStore) throws {
        let vault = try store.open()
        try vault.rememberUsername("alice")
        try vault.saveSession(SecretBytes(utf8: "a1"), name: "access", account: "alice")
        try vault.saveSession(SecretBytes(utf8: "r1"), name: "refresh", account: "alice")
        try vault.saveSession(SecretBytes(utf8: "b1"), name: "access", account: "bob")
        let report = try vault.logout(account: "alice")
        #expect(report.wipedSessions.count == 2 && !report.forgotUsername)
        #expect(try vault.lastUsername() == "alice")
        let left = try vault.storedKeys([.session])
        #expect(!left.contains { $0.account == "alice" })
        #expect(left.map(\.account) == ["bob"])
        let logout = try #require(try vault.auditEntries().last)
        #expect(logout.event == .logout && logout.detail?.contains("wiped 2 sessions") == true)
    }

    @Test(
        "the audit calls have async forms; verifyAudit gives each trail's path and verdict",
        arguments: TestedStore.allCases)
    func asyncAudit(store: TestedStore) async throws {
        let vault = try store.open()
        try await vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        let verdicts = try await vault.verifyAudit()
        #expect(!verdicts.isEmpty && verdicts.allSatisfy { $0.path.hasSuffix(".jsonl") && $0.verification.isIntact })
        #expect(try await vault.auditEntries().map(\.event).last == .sessionSaved)
        #expect(try await vault.resetAuditTrail().isEmpty, "an intact trail is left alone")
        #expect(try await vault.auditResets().isEmpty, "no reset yet")
    }

    @Test("a logout reports the sessions it wiped in one order, by account and name, on every store")
    func wipedSessionsOrder() throws {
        var orders: [[String]] = []
        for store in TestedStore.allCases {
            let vault = try store.open()
            for (account, name) in [("zoe", "b"), ("adam", "z"), ("zoe", "a"), ("adam", "c")] {
                try vault.saveSession(SecretBytes(utf8: "t"), name: name, account: account)
            }
            orders.append(try vault.logout(account: nil).wipedSessions.map { "\($0.account)/\($0.name)" })
        }
        #expect(orders.allSatisfy { $0 == ["adam/c", "adam/z", "zoe/a", "zoe/b"] }, "\(orders)")
    }

    @Test("shared-device logout and exit leave nothing at all", arguments: TestedStore.allCases)
    func sharedDevice(store: TestedStore) throws {
        let vault = try store.open(policy: .sharedDevice)
        try vault.rememberUsername("alice")
        try vault.saveSession(SecretBytes(utf8: "a1"), name: "access", account: "alice")
        try vault.saveSession(SecretBytes(utf8: "b1"), name: "access", account: "bob")
        try vault.logout()
        #expect(try vault.storedKeys().isEmpty)
        try vault.saveSession(SecretBytes(utf8: "c1"), name: "access", account: "carol")
        #expect(try vault.applyExitPolicy().wipedSessions.count == 1)
        #expect(try vault.storedKeys().isEmpty)
    }

    @Test("strict policy with no Secret Service refuses to store anything and says why")
    func strictWithoutSecretService() throws {
        let directory = try freshDirectory() + "/store"
        let error = #expect(throws: LatchkeyError.self) {
            try Vault.withoutSecretService(appID: testAppID, policy: .strict, storeDirectory: directory)
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("requires the Secret Service") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("session bus") == true)
        #expect(try POSIX.status(of: directory) == nil, "nothing may be written")
        let forced = #expect(throws: LatchkeyError.self) {
            try Vault.withoutSecretService(appID: testAppID, policy: .strict, storeDirectory: directory, backend: .file)
        }
        #expect(forced?.code == .policyDenied)
    }

    @Test("no Secret Service: auto falls back to the file visibly, and audits it")
    func fallback() throws {
        let directory = try freshDirectory() + "/store"
        let vault = try Vault.withoutSecretService(appID: testAppID, policy: .default, storeDirectory: directory)
        let status = try vault.status()
        #expect(status.backend == .file)
        #expect(status.reason.contains("no Secret Service"))
        #expect(status.protection.contains("key file on the same disk"))
        #expect(try vault.auditEntries().map(\.event) == [.backendFallback])
    }

    @Test(
        "the fallback is recorded and reported when the store in use changes, not on every open, and so is the return",
        .needsSecretService)
    func fallbackRecordedOnChange() throws {
        let appID = try SecretServiceTestSupport.freshAppID("fallbackchange")
        let directory = try freshDirectory() + "/store"
        for open in 0..<3 {
            let offline = try Vault.withoutSecretService(appID: appID, policy: .default, storeDirectory: directory)
            #expect((offline.openReport.fallback != nil) == (open == 0), "reported at the first open only")
            #expect(offline.openReport.backend == .file && offline.openReport.reason.contains("no Secret Service"))
            #expect(try offline.status().reason.contains("no Secret Service"))
        }
        let offline = try Vault.withoutSecretService(appID: appID, policy: .default, storeDirectory: directory)
        #expect(try offline.auditEntries().map(\.event) == [.backendFallback])
        let online = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
        #expect(online.backend.kind == .secretService)
        #expect(
            try online.auditEntries().map(\.event).filter { $0 == .backendReturned || $0 == .backendFallback } == [
                .backendFallback, .backendReturned,
            ])
        _ = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
        _ = try Vault.withoutSecretService(appID: appID, policy: .default, storeDirectory: directory)
        #expect(
            try online.auditEntries().filter { $0.event == .backendFallback }.count == 2,
            "a second fallback after the return is a change again")
        #expect(try online.verifyAudit().allSatisfy { $0.verification.isIntact })
        try online.wipe()
        try SecretServiceBackend(appID: appID).deleteAll()
    }

    @Test(
        "under a clock moved by hand, a session with a 1 h life is live at 59 min and gone at 61 min; the read deletes it and audits session.expired, stamped with the clock's time",
        arguments: TestedStore.allCases)
    func expiryUnderClock(store: TestedStore) async throws {
        let clock = HandClock(Date(timeIntervalSince1970: 2_000_000_000))
        let vault = try store.open(clock: clock.wallClock)
        let expiry = try await vault.saveSession(
            SecretBytes(utf8: "short"), name: "access", account: "alice", expires: clock.now.addingTimeInterval(3600))
        #expect(expiry == Date(timeIntervalSince1970: 2_000_003_600))
        clock.advance(by: 59 * 60)
        #expect(try await vault.session(named: "access", account: "alice")?.value == SecretBytes(utf8: "short"))
        #expect(try await vault.activeAccount() == "alice")
        clock.advance(by: 2 * 60)
        #expect(try await vault.sessions().isEmpty)
        #expect(try vault.storedKeys([.session]).isEmpty)
        #expect(try await vault.activeAccount() == nil)
        let entries = try await vault.auditEntries()
        #expect(entries.map(\.event) == [.sessionSaved, .sessionRead, .sessionExpired])
        #expect(entries.last?.time == Date(timeIntervalSince1970: 2_000_003_660))
    }

    @Test(
        "under a clock moved by hand, the policy's maxAge counts from the clock's time", arguments: TestedStore.allCases
    )
    func maxAgeUnderClock(store: TestedStore) throws {
        let clock = HandClock(Date(timeIntervalSince1970: 2_000_000_000))
        let vault = try store.open(clock: clock.wallClock)
        let expiry = try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "a")
        #expect(expiry == clock.now.addingTimeInterval(Policy.default.sessionMaxAge))
        clock.advance(by: Policy.default.sessionMaxAge)
        #expect(try vault.session(named: "access", account: "a") == nil)
    }

    @Test("the policy's maxAge caps every session's life", arguments: TestedStore.allCases)
    func maxAge(store: TestedStore) throws {
        let vault = try store.open()
        let before = Date()
        let expiry = try vault.saveSession(
            SecretBytes(utf8: "t"), name: "access", account: "a", expires: before.addingTimeInterval(90 * 86_400))
        #expect(abs(expiry.timeIntervalSince(before) - Policy.default.sessionMaxAge) < 5)
        let stored = try #require(try vault.session(named: "access", account: "a"))
        #expect(stored.expires.map { abs($0.timeIntervalSince(expiry)) < 0.01 } == true)
        #expect(try vault.sessions().map(\.name) == ["access"])
    }

    @Test(
        "wipe erases sessions and the username, keeps the opt-out, and is idempotent", arguments: TestedStore.allCases)
    func wipe(store: TestedStore) throws {
        let vault = try store.open()
        try vault.rememberUsername("alice")
        try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        try vault.setUsernameMemoryAllowed(false)
        #expect(try vault.wipe().wipedSessions.count == 1)
        #expect(try vault.storedKeys().isEmpty)
        #expect(try vault.isUsernameMemoryAllowed() == false)
        #expect(try vault.wipe().wipedSessions.isEmpty)
    }

    @Test("wiping the encrypted file destroys its key, so old copies of the vault cannot be read")
    func wipeDestroysKey() throws {
        let vault = try TestedStore.keyFile.open()
        try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        try vault.setUsernameMemoryAllowed(false)
        let file = try #require(vault.fileVault)
        let oldKey = try fileBytes(file.keyFilePath)
        try vault.wipe()
        #expect(try fileBytes(file.keyFilePath) != oldKey)
        #expect(try vault.isUsernameMemoryAllowed() == false)
        #expect(try vault.storedKeys().isEmpty)
    }

    @Test(
        "migration copies every item into the Secret Service and destroys the file vault only when a later process, at least 10 s later, reads them all back",
        .needsSecretService, .needsTestSeams)
    func migration() throws {
        #if LATCHKEY_TEST_SEAMS
            let (appID, directory, offline) = try Vault.offlineNamespace("migration")
            #expect(offline.openReport.backend == .file)
            #expect(offline.openReport.fallback != nil)
            #expect(offline.openReport.migration == nil)
            try offline.rememberUsername("alice")
            for i in 0..<5 { try offline.saveSession(SecretBytes(utf8: "token-\(i)"), name: "t\(i)", account: "alice") }
            let file = try #require(offline.fileVault)
            func fileVaultExists() throws -> Bool {
                try POSIX.status(of: file.vaultPath) != nil && POSIX.status(of: file.keyFilePath) != nil
            }
            #expect(try fileVaultExists())

            let online = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
            #expect(online.backend.kind == .secretService)
            #expect(online.openReport.backend == .secretService && online.openReport.fallback == nil)
            #expect(online.openReport.migration?.moved == 6)
            #expect(online.openReport.migration?.destroyedFileVault == false)
            #expect(online.openReport.migration?.awaitingVerification == true)
            #expect(try fileVaultExists(), "the file vault went on the strength of one acknowledgement")
            #expect(try online.lastUsername() == "alice")
            for i in 0..<5 {
                #expect(try online.session(named: "t\(i)", account: "alice")?.value == SecretBytes(utf8: "token-\(i)"))
            }
            let migrate = try #require(try online.auditEntries().first { $0.event == .migrate })
            #expect(migrate.detail?.contains("moved 6 items") == true, "\(migrate.detail ?? "")")

            // The same process, however late, never counts as the later open.
            let again = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
            #expect(again.openReport.migration?.destroyedFileVault == false)
            #expect(again.openReport.migration?.moved == 0)
            #expect(try fileVaultExists())
            // A user's deletion meanwhile reaches the file copy too, so it cannot come back.
            #expect(try again.deleteSession(named: "t4", account: "alice"))

            // Another process at once: too soon (kwalletd5 saves 5 s after the last change).
            #expect(try Self.openInAnotherProcess(appID, directory) == "moved=0 keptNewer=0 destroyed=0 awaiting=1")
            #expect(try fileVaultExists())
            // Another process once the minimum age has passed (the test seam makes it 0 s): destroyed.
            #expect(
                try Self.openInAnotherProcess(appID, directory, minimumAge: 0)
                    == "moved=0 keptNewer=0 destroyed=1 awaiting=0")
            #expect(try !fileVaultExists())
            let after = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
            #expect(after.openReport.migration == nil)
            #expect(try after.session(named: "t0", account: "alice")?.value == SecretBytes(utf8: "token-0"))
            #expect(try after.session(named: "t4", account: "alice") == nil)
            #expect(try after.verifyAudit().allSatisfy { $0.verification.isIntact })
            try after.wipe()
            try SecretServiceBackend(appID: appID).deleteAll()
        #endif
    }

    @Test(
        "an item the Secret Service lost between the copy and the later open is copied again from the file, and the file kept until a later open reads it",
        .needsSecretService, .needsTestSeams)
    func migrationCopiesAgainWhatWasLost() throws {
        #if LATCHKEY_TEST_SEAMS
            let (appID, directory, offline) = try Vault.offlineNamespace("migrationlost")
            try offline.saveSession(SecretBytes(utf8: "kept"), name: "access", account: "alice")
            try offline.saveSession(SecretBytes(utf8: "lost"), name: "refresh", account: "alice")
            let file = try #require(offline.fileVault)
            #expect(try Self.openInAnotherProcess(appID, directory) == "moved=2 keptNewer=0 destroyed=0 awaiting=1")
            // The provider loses what it acknowledged and had not saved (as kwalletd5 stopped within 5 s
            // does): an item, and the copy's confirmation written after it.
            try SecretServiceBackend(appID: appID).delete(ItemKey(kind: .session, account: "alice", name: "refresh"))
            try SecretServiceBackend(appID: appID).delete(MigrationRecord.confirmationKey)
            #expect(
                try Self.openInAnotherProcess(appID, directory, minimumAge: 0)
                    == "moved=1 keptNewer=0 destroyed=0 awaiting=1")
            #expect(try POSIX.status(of: file.vaultPath) != nil)
            #expect(
                try Self.openInAnotherProcess(appID, directory, minimumAge: 0)
                    == "moved=0 keptNewer=0 destroyed=1 awaiting=0")
            let online = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
            #expect(try online.session(named: "refresh", account: "alice")?.value == SecretBytes(utf8: "lost"))
            #expect(try online.session(named: "access", account: "alice")?.value == SecretBytes(utf8: "kept"))
            try online.wipe()
            try SecretServiceBackend(appID: appID).deleteAll()
        #endif
    }

    /// Opens the vault in `latchkey-testhelper migrate-open` (another process) and returns
    /// its line: what opening migrated.
    static func openInAnotherProcess(_ appID: AppID, _ directory: String, minimumAge: Int? = nil) throws -> String {
        let helper = Process()
        helper.executableURL = URL(fileURLWithPath: try testHelperPath())
        helper.arguments = ["migrate-open", directory, appID.rawValue] + (minimumAge.map { [String($0)] } ?? [])
        let output = Pipe()
        helper.standardOutput = output
        try helper.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        helper.waitUntilExit()
        #expect(helper.terminationStatus == 0, "\(text)")
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

@Suite("Vault migration under SIGKILL", .serialized, .sandboxed, .needsSecretService)
struct VaultMigrationCrashTests {
    @Test("killing the process at each step of migration, the later open's included, loses nothing", .needsTestSeams)
    func killedAtEveryStep() throws {
        #if LATCHKEY_TEST_SEAMS
            let (appID, directory, offline) = try Vault.offlineNamespace("migrationcrash")
            try offline.rememberUsername("alice")
            let tokens = (0..<5).map { "token-\($0)-\(UInt32.random(in: 0...UInt32.max))" }
            for (i, token) in tokens.enumerated() {
                try offline.saveSession(SecretBytes(utf8: token), name: "t\(i)", account: "alice")
            }
            let file = try #require(offline.fileVault)
            let service = SecretServiceBackend(appID: appID)

            /// Every item is in the Secret Service or in the file vault (or both), with its value.
            func nothingLost() throws {
                func value(_ key: ItemKey) throws -> SecretBytes? {
                    let fileItem = try POSIX.status(of: file.vaultPath) == nil ? nil : try file.read(key)
                    return try service.read(key)?.value ?? fileItem?.value
                }
                #expect(try value(Vault.usernameItem) == SecretBytes(utf8: "alice"))
                for (i, token) in tokens.enumerated() {
                    #expect(
                        try value(ItemKey(kind: .session, account: "alice", name: "t\(i)")) == SecretBytes(utf8: token))
                }
            }
            func killed(at step: Int) throws {
                let helper = Process()
                helper.executableURL = URL(fileURLWithPath: try testHelperPath())
                // Minimum age 0 s (a test seam): every later process may verify and destroy.
                helper.arguments = ["migrate-crash", directory, appID.rawValue, String(step), "0"]
                try helper.run()
                helper.waitUntilExit()
                #expect(
                    helper.terminationReason == .uncaughtSignal && helper.terminationStatus == SIGKILL, "step \(step)")
                try nothingLost()
            }

            // Six items copied, then the record of what was copied: seven steps, each in a new process.
            for step in 1...7 {
                try killed(at: step)
                #expect(
                    try POSIX.status(of: file.vaultPath) != nil,
                    "the file vault went before a later open read every item")
            }
            // A later process reads the six back (steps 1 to 6) and destroys the file vault (step 7).
            try killed(at: 7)
            #expect(try POSIX.status(of: file.vaultPath) == nil && POSIX.status(of: file.keyFilePath) == nil)
            let online = try Vault.open(appID: appID, policy: .default, storeDirectory: directory)
            #expect(online.openReport.migration == nil)
            try nothingLost()
            try online.wipe()
            try service.deleteAll()
        #endif
    }
}

@Suite("Vault audit events for failures", .sandboxed)
struct VaultFailureAuditTests {
    @Test(
        "a wrong passphrase is refused at Vault.open and audited as unlock.failed; a tampered vault as tamper.detected")
    func unlockAndTamper() throws {
        let appID = try SecretServiceTestSupport.freshAppID("failures")
        let directory = try freshDirectory() + "/store"
        var policy = Policy.default
        policy.fileKeySource = .passphrase
        // fast: the test is about auditing
        policy.kdf = Policy.KDFBounds(
            targetUnlockTime: 0.05, minimumMemoryKiB: 8_192, maximumMemoryKiB: 65_536, maximumOpsLimit: 4)
        let right = try Vault.open(
            appID: appID, policy: policy, storeDirectory: directory, backend: .file,
            passphrase: SecretBytes(utf8: "right"))
        try right.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        let vaultPath = try #require(right.fileVault?.vaultPath)

        let refused = #expect(throws: LatchkeyError.self) {
            try Vault.open(
                appID: appID, policy: policy, storeDirectory: directory, backend: .file,
                passphrase: SecretBytes(utf8: "wrong"))
        }
        #expect(refused?.code == .wrongKey)
        let unlock = try #require(try right.auditEntries().last)
        #expect(unlock.event == .unlockFailed && unlock.outcome == .failed(.wrongKey))

        var bytes = try fileBytes(vaultPath)
        bytes[bytes.count - 1] ^= 1
        try overwrite(vaultPath, with: bytes)
        let reopened = try Vault.open(
            appID: appID, policy: policy, storeDirectory: directory, backend: .file,
            passphrase: SecretBytes(utf8: "right"))
        let tampered = #expect(throws: LatchkeyError.self) { try reopened.session(named: "access", account: "alice") }
        #expect(tampered?.code == .tampered)
        let tamper = try #require(try right.auditEntries().last)
        #expect(tamper.event == .tamperDetected && tamper.outcome == .failed(.tampered))
    }

    @Test("a key file that does not open the vault is refused at Vault.open as wrongKey")
    func wrongKeyFileAtOpen() throws {
        let appID = try SecretServiceTestSupport.freshAppID("keyfile")
        let directory = try freshDirectory() + "/store"
        let vault = try Vault.open(appID: appID, storeDirectory: directory, backend: .file)
        try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
        let keyFile = try #require(vault.fileVault?.keyFilePath)
        try overwrite(keyFile, with: Sodium.randomBytes(count: 32))
        let refused = #expect(throws: LatchkeyError.self) {
            try Vault.open(appID: appID, storeDirectory: directory, backend: .file)
        }
        #expect(refused?.code == .wrongKey)
    }

    @Test("a policy that forbids remembering is audited as policy.denied")
    func policyDenied() throws {
        let vault = try TestedStore.keyFile.open(policy: .sharedDevice)
        try vault.rememberUsername("alice")
        let entry = try #require(try vault.auditEntries().last)
        #expect(entry.event == .policyDenied && entry.outcome == .denied && entry.detail?.contains("forbids") == true)
    }
}

@Suite("Vault KDF bounds from the policy", .sandboxed)
struct VaultKDFBoundsTests {
    @Test("a vault whose header asks for more Argon2id memory than the policy allows is refused before any derivation")
    func headerAboveBounds() throws {
        let appID = try SecretServiceTestSupport.freshAppID("kdfbounds")
        let directory = try freshDirectory() + "/store"
        let heavy = try KDFParameters(opsLimit: 1, memoryLimit: 64 << 10)
        try EncryptedFileBackend(
            appID: appID, directory: directory, keySource: .passphrase(SecretBytes(utf8: "p"), newVault: .fixed(heavy))
        )
        .write(StoredItem(value: SecretBytes(utf8: "t")), for: ItemKey(kind: .session, account: "a", name: "access"))
        var policy = Policy.default
        policy.fileKeySource = .passphrase
        policy.kdf = Policy.KDFBounds(
            targetUnlockTime: 0.1, minimumMemoryKiB: 8, maximumMemoryKiB: 32, maximumOpsLimit: 4)
        let error = #expect(throws: LatchkeyError.self) {
            try Vault.open(
                appID: appID, policy: policy, storeDirectory: directory, backend: .file,
                passphrase: SecretBytes(utf8: "p"))
        }
        #expect(error?.code == .invalidInput && error?.message.contains("file.kdf.maximumMemoryKiB") == true)
    }

    @Test("calibration never chooses more passes than the policy's reader accepts, and uses more memory instead")
    func calibrationRespectsPasses() throws {
        let parameters = try KDFParameters.calibrated(
            target: .milliseconds(150), memoryLimit: 1 << 20, minimumMemory: 1 << 20,
            maximumPasses: 2, maximumMemory: 256 << 20)
        #expect(parameters.opsLimit <= 2)
        #expect(parameters.memoryLimit > 1 << 20 && parameters.memoryLimit <= 256 << 20, "\(parameters)")
    }
}

@Suite("Vault audit failure policy", .sandboxed)
struct VaultAuditFailureTests {
    @Test("an audit entry that cannot be written fails the operation under 'fail' and becomes a warning under 'warn'")
    func failOrWarn() throws {
        for mode in [Policy.AuditFailureMode.fail, .warn] {
            var policy = Policy.default
            policy.audit.failureMode = mode
            let vault = try TestedStore.keyFile.open(policy: policy)
            try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "a")
            let trail = try #require(vault.auditEntries().isEmpty ? nil : vault.verifyAudit().first?.path)
            #expect(chmod(trail, 0o644) == 0)
            if mode == .fail {
                let error = #expect(throws: LatchkeyError.self) {
                    try vault.saveSession(SecretBytes(utf8: "u"), name: "access", account: "a")
                }
                #expect(error?.code == .insecurePermissions && error?.message.contains(trail) == true)
                #expect(error?.message.contains("nothing was changed") == true)
                #expect(vault.auditWarnings.isEmpty)
                #expect(chmod(trail, 0o600) == 0)
                #expect(try vault.session(named: "access", account: "a")?.value == SecretBytes(utf8: "t"))
            } else {
                try vault.saveSession(SecretBytes(utf8: "u"), name: "access", account: "a")
                #expect(vault.auditWarnings.map(\.code) == [.insecurePermissions])
            }
        }
    }

    @Test(
        "under 'fail', a change whose entry cannot be written is undone and the error keeps its cause; under 'warn' it stands",
        .needsTestSeams)
    func failedAppendUndoes() throws {
        #if LATCHKEY_TEST_SEAMS
            for mode in [Policy.AuditFailureMode.fail, .warn] {
                var policy = Policy.default
                policy.audit.failureMode = mode
                let vault = try TestedStore.keyFile.open(policy: policy)
                try vault.rememberUsername("alice")
                try vault.saveSession(SecretBytes(utf8: "t"), name: "access", account: "alice")
                try vault.saveSession(SecretBytes(utf8: "r"), name: "refresh", account: "alice")
                let before = try vault.auditEntries().count
                let diskFull: @Sendable () throws -> Void = { throw LatchkeyError(.io, "no space left on device") }
                try AuditTrail.$appendFailure.withValue(diskFull) {
                    if mode == .fail {
                        let saved = #expect(throws: LatchkeyError.self) {
                            try vault.saveSession(SecretBytes(utf8: "u"), name: "access", account: "alice")
                        }
                        #expect(saved?.code == .io && saved?.message.contains("the change was undone") == true)
                        let logout = #expect(throws: LatchkeyError.self) { try vault.logout(account: "alice") }
                        #expect(logout?.code == .io)
                        let optOut = #expect(throws: LatchkeyError.self) { try vault.setUsernameMemoryAllowed(false) }
                        #expect(optOut?.code == .io)
                    } else {
                        try vault.saveSession(SecretBytes(utf8: "u"), name: "access", account: "alice")
                        try vault.logout(account: "alice")
                    }
                }
                if mode == .fail {
                    #expect(try vault.session(named: "access", account: "alice")?.value == SecretBytes(utf8: "t"))
                    #expect(try vault.session(named: "refresh", account: "alice")?.value == SecretBytes(utf8: "r"))
                    #expect(try vault.lastUsername() == "alice" && vault.isUsernameMemoryAllowed())
                } else {
                    #expect(try vault.sessions(account: "alice").isEmpty)
                    #expect(vault.auditWarnings.count == 2 && vault.auditWarnings.allSatisfy { $0.code == .io })
                }
                #expect(try vault.auditEntries().count >= before)
                #expect(try vault.verifyAudit().allSatisfy { $0.verification.isIntact })
            }
        #endif
    }
}
