import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What apps use: one app namespace's credentials, kept by a policy, in the
/// store the policy allows, with every credential event on the audit trail.
///
/// A vault remembers the last username (unless the user opted out), keeps
/// session tokens with expiry, wipes what the policy says on logout, and
/// reports honestly which store holds the data (``status()-16kjr``).
///
/// Opening a vault (``open(appID:policy:storeDirectory:backend:passphrase:unlock:)-42bn``)
/// chooses the backend: with `auto`, the Secret Service when it answers, else,
/// when there is none, the encrypted file if the policy allows that fallback
/// (audited as `backend.fallback`), else `.unavailable` saying why; a Secret
/// Service or bus that does not answer within the policy's deadline is
/// `.timedOut`, never a fallback. When the Secret Service
/// answers and a file vault from an earlier fallback exists, the policy may
/// move it there at once (``migrate()-8jolc``). ``openReport`` says what opening did.
///
/// Every operation that changes or reads a credential has one shape: the
/// policy decides, the store acts, the audit trail records the outcome, and
/// the caller gets the value or a report.
///
/// Every method has a synchronous form, for command-line tools, and an `async`
/// form that runs off the caller's thread, so a UI never blocks on D-Bus, the
/// disk or a key derivation. A vault is safe to share across tasks.
///
/// A vault may stay open for as long as the process runs (a server keeps one per
/// namespace), and then saves work without giving up correctness: the Secret Service
/// backend keeps what it learnt (the namespace's key items and where items were found,
/// confirmed with the service as each operation begins), a passphrase-protected file
/// keeps the key derived for its salt, and the audit trail keeps its key, read again
/// when it no longer verifies the trail. Every operation still sees what other
/// processes did: the service is asked again, and the encrypted file is read, decrypted
/// and authenticated again, as each operation begins. The library keeps nothing
/// process-wide: what an open vault keeps goes when it is released. A long-lived
/// process may also defer the `fsync` of its audit entries until it has answered
/// (``auditDurability``, ``settleAudit()-6yyh3``).
public final class Vault: Sendable {
    /// The app namespace.
    public let appID: AppID
    /// The policy in force.
    public let policy: Policy
    /// The directory holding the file vault and the audit trails; nil for a
    /// vault kept wholly in memory (`LatchkeyTesting`'s test vault).
    public let storeDirectory: String?
    /// The store in use, by what it is.
    let store: Store
    /// The store in use.
    var backend: any CredentialBackend { store.backend }
    /// Where the vault reads the time from, for every expiry decision and audit entry.
    package let clock: WallClock
    /// Why this store is in use, in plain words.
    let selectionReason: String
    /// Why the Secret Service could not be used, when `auto` fell back to the file at this open.
    let secretServiceUnavailable: String?
    /// The encrypted file vault of this namespace, whether or not it is the store
    /// in use (a leftover from an earlier fallback is wiped and migrated through it).
    let fileVault: EncryptedFileBackend?
    /// The refresh and commit locks of a vault kept in memory, its store's (a vault
    /// with a directory locks files in it).
    let memoryLocks: MemoryStoreLocks?
    /// The audit trail of the store in use, kept in a file; nil for a vault kept in
    /// memory, or when the policy disables auditing.
    let auditTrail: AuditTrail?
    /// The audit trail of a vault kept in memory, unless the policy disables auditing.
    let memoryAudit: MemoryAuditTrail?
    /// The audit trail of the store in use (in memory for a vault kept in memory),
    /// or nil when the policy disables auditing.
    var audit: (any AuditLog)? { auditTrail ?? memoryAudit }
    /// The audit trail of the encrypted file, when the Secret Service is in use
    /// (it is still verified and shown).
    let fileAudit: AuditTrail?
    /// The audit appends whose `fsync` and anchor move wait for ``settleAudit()-6yyh3``, while
    /// ``auditDurability`` is ``AuditDurability/deferred``.
    let auditDeferral: AuditSyncDeferral
    /// Audit entries that could not be written while the policy's
    /// `audit.onFailure` is `warn`, for ``auditWarnings``.
    let droppedAuditEntries = Mutex<[LatchkeyError]>([])
    /// Rotated grants whose save failed after the endpoint answered, by session, as this
    /// vault received them (kept on disk too, in ``pendingRotationVault``, for other
    /// processes): saved first at the next refresh of the session, whose old refresh token
    /// is never presented again (`docs/ROTATION.md`, "A save that fails").
    let pendingRotations = Mutex<[ItemKey: PendingRotation]>([:])
    /// Whether the stores were opened (or opened again) and no operation has begun since:
    /// the first ``beginOperation()`` then has nothing to make fresh.
    private let storesJustOpened = Mutex(true)
    /// Why the Secret Service could not be used, when this open is the one at
    /// which the namespace fell back to the file (set by ``recordStoreChange(fallback:)``).
    private let fallbackReason = Mutex<String?>(nil)
    /// What opening migrated, set by ``open(appID:policy:storeDirectory:backend:passphrase:unlock:)``.
    private let openingMigration = Mutex<MigrationReport?>(nil)

    /// What opening this vault did: the store chosen and why, whether it fell
    /// back to the encrypted file, and what was migrated.
    public var openReport: OpenReport {
        OpenReport(
            backend: backend.kind, reason: selectionReason, fallback: fallbackReason.withLock { $0 },
            migration: openingMigration.withLock { $0 }, secretServiceUnavailable: secretServiceUnavailable)
    }

    /// Opens the vault of `appID`: chooses the store, records a fallback, and
    /// migrates a leftover file vault when the policy says so. The report of
    /// what happened is the vault's ``openReport``.
    ///
    /// - Parameters:
    ///   - appID: The app namespace, such as `com.example.notes`.
    ///   - policy: The policy; ``Policy/default`` when not given.
    ///   - storeDirectory: Where the file vault and audit trails live;
    ///     ``defaultStoreDirectory(environment:)`` when nil.
    ///   - backend: Overrides the policy's `backend.kind` (the command line's `--backend`).
    ///   - passphrase: The passphrase of a passphrase-protected file vault; needed
    ///     only when the policy's `file.keySource` is `passphrase` and the file is used.
    ///   - unlock: Overrides the policy's `secretService.unlock`: with `.prompt`, a
    ///     locked Secret Service collection is unlocked here through the provider's
    ///     own prompt, which may wait for a person up to the policy's
    ///     `secretService.unlockTimeoutSeconds`. When neither gives one:
    ///     ``Policy/SecretServiceUnlock/sessionDefault(environment:)`` of this process.
    /// - Throws: `LatchkeyError`: `.locked` when the collection is locked and the
    ///   unlock mode is `.never`, or its unlock prompt was dismissed or not answered
    ///   (operations report a locked collection the same way); `.unavailable` when the Secret Service is
    ///   required (or the fallback is forbidden) and does not answer, saying why;
    ///   `.wrongKey` when a passphrase is needed but not given, or when the passphrase
    ///   or key file does not open the existing encrypted vault (checked here, so a
    ///   passphrase dialog learns at once; recorded as `unlock.failed`); `.invalidInput`
    ///   when `storeDirectory` is relative or no default can be found; audit and backend errors.
    /// - Returns: The open vault.
    public static func open(
        appID: AppID,
        policy: Policy = .default,
        storeDirectory: String? = nil,
        backend: Policy.BackendChoice? = nil,
        passphrase: SecretBytes? = nil,
        unlock: Policy.SecretServiceUnlock? = nil
    ) throws -> Vault {
        try open(
            appID: appID, policy: policy, storeDirectory: storeDirectory, backend: backend, passphrase: passphrase,
            unlock: unlock ?? policy.secretServiceUnlock
                ?? .sessionDefault(environment: ProcessInfo.processInfo.environment),
            secretService: {
                SecretServiceBackend(
                    appID: appID, deadline: .milliseconds(Int64(policy.secretServiceTimeout * 1000)))
            })
    }

    /// Opens the vault on a store of the app's own (a ``CredentialBackend`` it
    /// implements). The policy's backend choice is not consulted; audit trails
    /// are kept in `storeDirectory`. The parameters come in the order of
    /// ``open(appID:policy:storeDirectory:backend:passphrase:unlock:)-42bn``, where
    /// `backend` is the policy's choice; here the store itself is given.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - policy: The policy.
    ///   - storeDirectory: Where the audit trail lives: an absolute path.
    ///   - store: The store to use.
    /// - Throws: `LatchkeyError` `.invalidInput` when `storeDirectory` is relative
    ///   (it would write into whatever the working directory is).
    public convenience init(
        appID: AppID, policy: Policy = .default, storeDirectory: String, store: any CredentialBackend
    ) throws {
        try self.init(appID: appID, policy: policy, storeDirectory: storeDirectory, store: store, clock: .system)
    }

    /// Opens the vault on `store` with `clock` as its time.
    /// - Throws: `LatchkeyError` `.invalidInput` when `storeDirectory` is relative.
    package convenience init(
        appID: AppID, policy: Policy, storeDirectory: String, store backend: any CredentialBackend, clock: WallClock
    ) throws {
        try self.init(
            appID: appID, policy: policy, storeDirectory: storeDirectory, given: .other(backend), clock: clock)
    }

    /// Opens the vault on the encrypted file `file`, chosen by the caller (tests give one
    /// whose key source or failures they choose).
    /// - Throws: `LatchkeyError` `.invalidInput` when `storeDirectory` is relative.
    package convenience init(
        appID: AppID, policy: Policy = .default, storeDirectory: String, store file: EncryptedFileBackend,
        clock: WallClock = .system
    ) throws {
        try self.init(appID: appID, policy: policy, storeDirectory: storeDirectory, given: .file(file), clock: clock)
    }

    /// Opens the vault on the Secret Service backend `service`, chosen by the caller (tests
    /// give one whose bus they control), without checking that it answers.
    /// - Throws: `LatchkeyError` `.invalidInput` when `storeDirectory` is relative.
    package convenience init(
        appID: AppID, policy: Policy = .default, storeDirectory: String, store service: SecretServiceBackend,
        clock: WallClock = .system
    ) throws {
        try self.init(
            appID: appID, policy: policy, storeDirectory: storeDirectory, given: .secretService(service), clock: clock)
    }

    /// Opens the vault on `store`, given by the caller, with `clock` as its time.
    private init(appID: AppID, policy: Policy, storeDirectory: String, given store: Store, clock: WallClock) throws {
        let storeDirectory = try StoreDirectory.requireAbsolute(storeDirectory, origin: "the store directory")
        self.appID = appID
        self.policy = policy
        self.storeDirectory = storeDirectory
        self.memoryLocks = nil
        self.store = store
        let deferral = AuditSyncDeferral()
        self.auditDeferral = deferral
        self.clock = clock
        self.selectionReason = "the app supplied this store"
        self.secretServiceUnavailable = nil
        self.fileVault = nil
        self.memoryAudit = nil
        self.auditTrail =
            policy.audit.isEnabled
            ? AuditTrail(
                appID: appID, directory: storeDirectory, store: store, retention: policy.audit.retention,
                clock: clock.now, deferral: deferral)
            : nil
        self.fileAudit = nil
    }

    /// A vault kept wholly in memory on `backend`, with `clock` as its time: its
    /// audit trail is a ``MemoryAuditTrail``, and it reads and writes no file, so
    /// it needs no store directory (`LatchkeyTesting`'s test vault).
    /// Every vault on one store is given the store's `locks`, so that they refresh one at
    /// a time, as processes on one store do.
    package init(
        appID: AppID, policy: Policy, inMemory backend: any CredentialBackend, locks: MemoryStoreLocks,
        clock: WallClock
    ) {
        self.appID = appID
        self.memoryLocks = locks
        self.policy = policy
        self.storeDirectory = nil
        self.store = .other(backend)
        self.auditDeferral = AuditSyncDeferral()
        self.clock = clock
        self.selectionReason = "the app supplied this store, kept in memory with its audit trail"
        self.secretServiceUnavailable = nil
        self.fileVault = nil
        self.auditTrail = nil
        self.memoryAudit =
            policy.audit.isEnabled ? MemoryAuditTrail(appID: appID, storeKind: backend.kind, clock: clock.now) : nil
        self.fileAudit = nil
    }

    /// Opens a vault with `secretService` as the Secret Service backend (tests
    /// give one whose bus does not answer).
    static func open(
        appID: AppID,
        policy: Policy,
        storeDirectory: String?,
        backend choice: Policy.BackendChoice?,
        passphrase: SecretBytes?,
        unlock: Policy.SecretServiceUnlock = .never,
        clock: WallClock = .system,
        secretService: () -> SecretServiceBackend
    ) throws -> Vault {
        let directory =
            try storeDirectory.map { try StoreDirectory.requireAbsolute($0, origin: "the store directory") }
            ?? Vault.defaultStoreDirectory()
        let file = Vault.fileBackend(appID: appID, policy: policy, directory: directory, passphrase: passphrase)
        let selection = try Vault.select(
            choice ?? policy.backend, policy: policy, appID: appID, file: file, unlock: unlock,
            secretService: secretService)
        if unlock == .prompt, let service = selection.store.secretService {
            try service.unlockDefaultCollection(
                timeout: .milliseconds(Int64(policy.secretServiceUnlockTimeout * 1000)))
        }
        if selection.store.kind == .file, let header = try file?.vaultKDFParameters() {
            try Vault.check(header, against: policy.kdf ?? .standard, policyName: policy.name)
        }
        let vault = Vault(
            appID: appID, policy: policy, directory: directory, selection: selection, fileVault: file, clock: clock)
        try vault.finishOpening(fallback: selection.fallbackFrom)
        return vault
    }

    /// What opening does once the store is chosen and the vault made: records a change of
    /// store, checks the encrypted file's key, finishes an interrupted deletion, migrates a
    /// leftover file vault when the policy says so; the first operation then has nothing to
    /// do again (``beginOperation()``).
    private func finishOpening(fallback: String?) throws {
        try recordStoreChange(fallback: fallback)
        if store.kind == .file, let file = fileVault {
            do {
                try file.checkKey()
            } catch let error as LatchkeyError where error.code == .wrongKey {
                // Recorded as every refused unlock is (`unlock.failed`), and thrown from here.
                try perform(.unlockFailed) { _ -> OperationOutcome<Void> in throw error }
            }
        }
        if store.kind != .file {
            try unlessTrailBroken(.logout) { try finishInterruptedDeletions() }
        }
        if store.kind == .secretService, try fileVaultExists(), policy.automaticMigrationDecision().isAllowed,
            fileVault != nil
        {
            try unlessTrailBroken(.migrate) {
                let migration = try migrate()
                openingMigration.withLock { $0 = migration }
            }
        }
        storesJustOpened.withLock { $0 = true }
    }

    /// Opens again, for a command that begins, a vault kept open on the Secret Service (the
    /// agent's pool keeps one while the bus watch saw no change, ``SecretServiceBackend/busGeneration``):
    /// makes the checks and steps of ``open(appID:policy:storeDirectory:backend:passphrase:unlock:)-42bn``
    /// in its order and with its errors (the service there and answering, its default collection
    /// there, or unlocked or created through the provider's prompt under `unlock` `prompt`; a
    /// change of store to record, an interrupted deletion, a leftover file vault to migrate), asking
    /// the service only what the watch cannot know: `ReadAlias` is always asked, so a hung service
    /// fails here as it fails a new opening.
    /// - Parameters:
    ///   - choice: The backend chosen for the command (`--backend`, else the policy's), as opening was given it.
    ///   - unlock: The unlock mode, as opening was given it.
    /// - Returns: false when the vault may not be used as it is: opening now would choose the
    ///   store again (the Secret Service is unavailable), so the caller opens anew.
    /// - Throws: What opening throws at the same step: `.timedOut` (wrapped as opening wraps
    ///   it when the Secret Service is required), `.locked`, audit and backend errors.
    package func resume(backend choice: Policy.BackendChoice, unlock: Policy.SecretServiceUnlock) throws -> Bool {
        guard let service = store.secretService else { return false }
        storesJustOpened.withLock { $0 = false }
        beginOperation()
        do {
            try Vault.checkUsable(service, unlock: unlock)
        } catch let error as LatchkeyError where error.code == .unavailable {
            return false
        } catch let error as LatchkeyError where error.code == .timedOut && choice == .secretService {
            throw Vault.requiredButUnavailable(error, policy: policy)
        }
        if unlock == .prompt {
            try service.unlockDefaultCollection(
                timeout: .milliseconds(Int64(policy.secretServiceUnlockTimeout * 1000)))
        }
        try finishOpening(fallback: nil)
        return true
    }

    /// Starts the process's watch of the Secret Service bus when this vault is on the Secret
    /// Service (``SecretServiceBackend/startFollowingBus()``), so that a process keeping it open
    /// learns from ``SecretServiceBackend/busGeneration`` whether anything changed since.
    package func startFollowingSecretServiceBus() {
        store.secretService?.startFollowingBus()
    }

    private init(
        appID: AppID, policy: Policy, directory: String, selection: Selection, fileVault file: EncryptedFileBackend?,
        clock: WallClock
    ) {
        let auditKeys = EncryptedFileBackend.auditKeys(appID: appID, directory: directory)
        self.appID = appID
        self.policy = policy
        self.storeDirectory = directory
        self.memoryLocks = nil
        self.store = selection.store
        let deferral = AuditSyncDeferral()
        self.auditDeferral = deferral
        self.selectionReason = selection.reason
        self.secretServiceUnavailable = selection.fallbackFrom
        self.fileVault = file
        self.clock = clock
        self.memoryAudit = nil
        if policy.audit.isEnabled {
            let usesFile = selection.store.kind == .file
            auditTrail = AuditTrail(
                appID: appID, directory: directory, store: usesFile ? .file(auditKeys) : selection.store,
                retention: policy.audit.retention, clock: clock.now, deferral: deferral)
            fileAudit =
                usesFile
                ? nil
                : AuditTrail(
                    appID: appID, directory: directory, store: .file(auditKeys), retention: policy.audit.retention,
                    clock: clock.now, deferral: deferral)
        } else {
            auditTrail = nil
            fileAudit = nil
        }
    }

    /// The salt of the encrypted file vault, read without the KDF (``EncryptedFileBackend/vaultSalt()``);
    /// nil when there is no file vault or it is not opened with a passphrase.
    package func fileVaultSalt() throws -> [UInt8]? {
        beginOperation()
        return try fileVault?.vaultSalt()
    }

    /// The salt of the encrypted file vault once it is opened and authenticated
    /// with the passphrase given (``EncryptedFileBackend/authenticatedSalt()``); nil when there is none.
    /// - Throws: `LatchkeyError` `.wrongKey` when the passphrase does not open it.
    package func authenticatedFileVaultSalt() throws -> [UInt8]? {
        beginOperation()
        return try fileVault?.authenticatedSalt()
    }

    /// The default store directory: `$XDG_DATA_HOME/latchkey` when that is an
    /// absolute path (a relative one is ignored, as the XDG rule says), else
    /// `$HOME/.local/share/latchkey`.
    /// - Parameter environment: The environment to read; the process's when nil.
    /// - Returns: The directory's path.
    /// - Throws: `LatchkeyError` `.invalidInput` saying whether `HOME` is missing or
    ///   relative, or naming the variable whose bytes are not valid UTF-8 (the path is
    ///   refused, never read with other characters in their place).
    public static func defaultStoreDirectory(environment: [String: String]? = nil) throws -> String {
        try StoreDirectory.standard(environment: environment ?? StoreDirectory.processEnvironment())
    }

    /// The file vault as the policy and the passphrase allow it to be opened:
    /// nil when the policy protects it with a passphrase and none was given.
    private static func fileBackend(appID: AppID, policy: Policy, directory: String, passphrase: SecretBytes?)
        -> EncryptedFileBackend?
    {
        switch (policy.fileKeySource, passphrase) {
        case (.passphrase, let passphrase?):
            let calibration = (policy.kdf ?? .standard).calibration
            return EncryptedFileBackend(
                appID: appID, directory: directory, keySource: .passphrase(passphrase, newVault: calibration))
        case (.passphrase, nil):
            return nil
        case (.keyfile, _), (nil, _):
            return EncryptedFileBackend(appID: appID, directory: directory, keySource: .keyFile)
        }
    }

    private struct Selection {
        var store: Store
        var reason: String
        var fallbackFrom: String?
    }

    /// Chooses the store. A Secret Service without a default collection counts as
    /// unavailable unless `unlock` is `prompt`, under which opening asks the provider to create one.
    private static func select(
        _ choice: Policy.BackendChoice, policy: Policy, appID: AppID, file: EncryptedFileBackend?,
        unlock: Policy.SecretServiceUnlock, secretService: () -> SecretServiceBackend
    ) throws -> Selection {
        /// The file vault instead of `service` when Latchkey's own provider serves the bus: the
        /// namespace is kept in the encrypted file directly (the same user's, on the same
        /// machine) rather than as items inside the provider's own file vault, so there is one
        /// encryption and one audit entry per operation. Not when the policy forbids the file, its
        /// passphrase was not given, or the namespace has items in the Secret Service already
        /// (they stay where their writes were acknowledged).
        func direct(_ service: SecretServiceBackend) throws -> Selection? {
            guard service.isLatchkeysOwnProvider, policy.allowsFileFallback, let file, try !service.holdsItems()
            else { return nil }
            return Selection(
                store: .file(file),
                reason:
                    "Latchkey's own Secret Service provider serves the session bus, so the encrypted file is used directly (one encryption, one audit entry)"
            )
        }
        /// The file vault, when the file is to be used.
        func fileBackend() throws -> EncryptedFileBackend {
            guard let file else {
                throw LatchkeyError(
                    .wrongKey,
                    "the encrypted vault of \(appID) is protected by a passphrase (policy file.keySource \"passphrase\"), and none was given"
                )
            }
            return file
        }
        switch choice {
        case .file:
            if policy.backend == .secretService {
                throw LatchkeyError(
                    .policyDenied,
                    "policy '\(policy.name)' requires the Secret Service (backend.kind \"secret-service\"); the encrypted file may not be used"
                )
            }
            return Selection(
                store: .file(try fileBackend()), reason: "the encrypted file was chosen (backend \"file\")")
        case .secretService:
            let service = secretService()
            do {
                try checkUsable(service, unlock: unlock)
            } catch let error as LatchkeyError where error.code == .unavailable || error.code == .timedOut {
                throw requiredButUnavailable(error, policy: policy)
            }
            if let direct = try direct(service) { return direct }
            return Selection(store: .secretService(service), reason: "the Secret Service was required and answered")
        case .auto:
            let service = secretService()
            do {
                try checkUsable(service, unlock: unlock)
                if let direct = try direct(service) { return direct }
                return Selection(store: .secretService(service), reason: "the Secret Service answered")
            } catch let error as LatchkeyError where error.code == .unavailable {
                // Only "there is none" falls back; a bus or daemon that does not
                // answer within the deadline is `.timedOut` (exit 75), never a silent switch.
                if case .deny(let reason) = policy.fileFallbackDecision(reason: error.message) {
                    throw LatchkeyError(.unavailable, reason)
                }
                return Selection(
                    store: .file(try fileBackend()),
                    reason: "no Secret Service (\(error.message)), so the encrypted file is used",
                    fallbackFrom: error.message)
            }
        }
    }

    /// Checks that the Secret Service can be used as it is: that it answers and, unless
    /// `unlock` is `prompt` (opening then asks the provider to unlock or create it), that it has
    /// a default collection.
    private static func checkUsable(_ service: SecretServiceBackend, unlock: Policy.SecretServiceUnlock) throws {
        try service.checkAvailability()
        if unlock == .never { try service.checkDefaultCollection() }
    }

    /// The error of a Secret Service required (by the policy or `--backend`) that is
    /// unavailable or does not answer (`error`), saying which rule required it.
    private static func requiredButUnavailable(_ error: LatchkeyError, policy: Policy) -> LatchkeyError {
        let rule =
            policy.backend == .secretService
            ? "policy '\(policy.name)' requires the Secret Service (backend.kind \"secret-service\")"
            : "the Secret Service was required (backend \"secret-service\")"
        return LatchkeyError(error.code, "\(rule), and it is unavailable: \(error.message); nothing was stored")
    }

    /// Refuses, before any key derivation runs, a vault whose header asks for
    /// more Argon2id memory or passes than the policy's reader bounds allow.
    private static func check(_ header: KDFParameters, against bounds: Policy.KDFBounds, policyName: String) throws {
        if header.memoryLimit > bounds.maximumMemoryKiB * 1024 {
            throw LatchkeyError(
                .invalidInput,
                "the vault asks for \(header.memoryLimit / 1024) KiB of Argon2id memory, above policy '\(policyName)' file.kdf.maximumMemoryKiB (\(bounds.maximumMemoryKiB))"
            )
        }
        if header.opsLimit > UInt64(bounds.maximumOpsLimit) {
            throw LatchkeyError(
                .invalidInput,
                "the vault asks for \(header.opsLimit) Argon2id passes, above policy '\(policyName)' file.kdf.maximumOpsLimit (\(bounds.maximumOpsLimit))"
            )
        }
    }

    /// The file that marks a namespace as fallen back to the encrypted file:
    /// present from the first fallback until the Secret Service is used again.
    var fallbackMarkerPath: String { namespace.file("fallback") }

    /// The namespace's own directory in the store directory. A vault kept in
    /// memory has none and never asks for it (its deletions are never recoverable
    /// runs, ``deleteRecoverably(_:from:for:changes:)``, and only opening writes markers).
    var namespace: NamespaceDirectory {
        NamespaceDirectory(appID: appID, storeDirectory: storeDirectory ?? "/nonexistent-latchkey-memory-vault")
    }

    /// Records `backend.fallback` when the store in use changes to the
    /// encrypted file for want of a Secret Service, and `backend.returned` when
    /// the Secret Service is used again, not on every open.
    private func recordStoreChange(fallback: String?) throws {
        let marked = try POSIX.status(of: fallbackMarkerPath) != nil
        if let fallback, !marked {
            try record(.backendFallback, .ok, detail: "using the encrypted file: \(fallback)")
            try namespace.prepare()
            try PrivateFiles.replace(fallbackMarkerPath, with: Array("file\n".utf8))
            fallbackReason.withLock { $0 = fallback }
        } else if backend.kind == .secretService, marked {
            try unlessTrailBroken(.backendReturned) {
                try record(.backendReturned, .ok, detail: "the Secret Service answers again")
                try PrivateFiles.remove(fallbackMarkerPath)
            }
        }
    }

    /// Runs a step of opening that the escape hatches (``resetAuditTrail()``, ``wipe()``)
    /// must not depend on: when the trail of the store in use is broken and so cannot record
    /// it (`.tampered`), the step is not made (it loses nothing: an interrupted deletion or a
    /// migration waits for the next open), the error is kept for ``auditWarnings``, and the
    /// open goes on. Any other failure of the step (altered data found by the step itself)
    /// is thrown as before.
    private func unlessTrailBroken(_ event: AuditEvent, _ step: () throws -> Void) throws {
        do {
            try step()
        } catch let error as LatchkeyError where error.code == .tampered {
            guard try isTrailBroken() else { throw error }
            keepAuditWarning(error, missing: event)
        }
    }

    /// Whether the trail of the store in use does not verify (read-only).
    private func isTrailBroken() throws -> Bool {
        guard let audit else { return false }
        do {
            return try !audit.verify().isIntact
        } catch let error as LatchkeyError where error.code == .tampered {
            return true
        }
    }

    /// Makes the stores answer the operation that begins as stores opened for it would
    /// (``Store/beginOperation()``): the Secret Service is checked again and what it
    /// was found to hold is confirmed before use; the encrypted file (the store in use,
    /// or a leftover from a fallback) is read, decrypted and authenticated again. Every
    /// operation calls it first, so a vault kept open sees what other processes did; the
    /// first after opening has nothing to do.
    func beginOperation() {
        let justOpened = storesJustOpened.withLock { justOpened in
            defer { justOpened = false }
            return justOpened
        }
        guard !justOpened else { return }
        store.beginOperation()
        if let fileVault, fileVault !== store.file { fileVault.beginOperation() }
    }

    /// Lets go of what the operations so far read and decrypted from the encrypted file (its
    /// items), keeping the keys: a process that keeps the vault open between requests calls
    /// it once a request has run, so that no credential stays in its memory until the next
    /// one (which reads the file again in any case).
    package func releaseReadContent() {
        store.file?.beginOperation()
        if let fileVault, fileVault !== store.file { fileVault.beginOperation() }
    }

    /// Whether an encrypted file vault exists for this namespace.
    func fileVaultExists() throws -> Bool {
        return try fileVault?.vaultExists() ?? false
    }
}
