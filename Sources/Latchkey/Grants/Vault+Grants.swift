import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Vault {
    #if LATCHKEY_TEST_SEAMS
        /// A test seam (only in a build with LATCHKEY_TEST_SEAMS=1, as `make test` makes): called when a refresh has read the session again
        /// to settle its outcome, just before it writes or ends it, so a test can put another
        /// caller's change in that window.
        @TaskLocal package static var conditionalWriteObserver: (@Sendable () -> Void)?
    #endif

    /// Tells the test seam, where it is compiled, that a refresh read the session again to settle it.
    private static func conditionalWriteChecked() {
        #if LATCHKEY_TEST_SEAMS
            conditionalWriteObserver?()
        #endif
    }

    /// The one place the grant code reads the time.
    func grantClock() -> Date { clock.now() }

    /// Saves a grant as one session item, replacing whatever the session held
    /// (a token or an earlier grant) in one atomic, durable write. The item lives
    /// as long as its refresh token (its access token's expiry when it has none),
    /// capped by the policy's `sessions.maxAgeSeconds`. ``Vault/session(named:account:)-k6m0``
    /// reads the grant's access token.
    ///
    /// It waits for a refresh of the namespace in progress (in any process), so
    /// a refresh that started from an older grant never overwrites this one.
    /// - Parameters:
    ///   - grant: The tokens the server issued.
    ///   - name: The session's name, such as `access`.
    ///   - account: The account it belongs to.
    /// - Returns: When the stored item expires.
    /// - Throws: `LatchkeyError` `.invalidInput` for an empty name or access token,
    ///   a name or account over 255 bytes, a token with a character outside RFC 6749's
    ///   VSCHAR (%x20-7E), or a grant whose refresh token (or, without one, access token)
    ///   has already expired; `.timedOut` when a refresh holds the
    ///   session for longer than 30 s; store and audit errors.
    @discardableResult
    public func saveGrant(_ grant: Grant, name: String, account: String) throws -> Date {
        beginOperation()
        guard !name.isEmpty else { throw LatchkeyError(.invalidInput, "the session name is empty") }
        guard !grant.accessToken.isEmpty else {
            throw LatchkeyError(.invalidInput, "the grant's access token is empty; nothing was stored")
        }
        try grant.requireVisibleTokens(what: "the grant")
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        let now = grantClock()
        let item = try grantItem(grant, name: name, created: now)
        return try withRefreshLock(deadline: .seconds(30)) {
            try perform(.sessionSaved, account: account, detail: name) { changes in
                try changes.willChange(key, in: backend)
                try backend.write(item, for: key)
                return OperationOutcome(item.expires ?? now)
            }
        }
    }

    /// Reads a session's grant. A grant whose item expired is deleted and audited
    /// (`session.expired`), as ``Vault/session(named:account:)-k6m0`` does.
    /// - Parameters:
    ///   - name: The session's name.
    ///   - account: The account.
    /// - Returns: The grant, or nil when there is none (or the session holds a plain token).
    /// - Throws: `LatchkeyError` when the store cannot answer; `.tampered` for a damaged grant.
    public func grant(named name: String, account: String) throws -> Grant? {
        beginOperation()
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        guard let item = try readLiveSession(key), GrantRecord.isGrant(item.value) else { return nil }
        return try GrantRecord.decode(item.value)
    }

    /// A valid access token of a session holding a grant, refreshed through
    /// `refresher` when it has expired or less than min(30 s, a tenth of its
    /// lifetime) remains. When no refresh is due this costs one audited read,
    /// as ``Vault/session(named:account:)-k6m0`` does.
    ///
    /// A refresh takes the namespace's refresh lock (`refresh.lock` in its
    /// directory; see `docs/ROTATION.md`): every other caller, in this process or
    /// another, waits for it, reads the grant again and adopts the rotated one, so
    /// `refresher` is called by one caller at a time and never with a refresh token
    /// that was already used successfully. The new grant is saved only if the
    /// session still holds the grant the refresh started from (a newer one is
    /// kept). Each refresh is audited as `session.refreshed`. When that save fails after
    /// the server answered, the answer is kept (in the namespace's directory, for every
    /// process) and the next call saves it instead of refreshing again.
    ///
    /// Call this synchronous form from threads, not from Swift concurrency (it
    /// blocks while `refresher` runs); use the `async` form there.
    /// - Parameters:
    ///   - name: The session's name.
    ///   - account: The account.
    ///   - deadline: How long to wait for another caller's refresh.
    ///   - refresher: Asks the server for a new grant and classifies its answer.
    /// - Returns: The access token; nil when there is no session, or its access
    ///   token expired and it holds no refresh token. A session holding a plain
    ///   token returns that token.
    /// - Throws: `LatchkeyError` `.refreshRejected` when the server refused the refresh
    ///   (the session ended: its grant is deleted, and the account's other sessions and
    ///   the remembered username as the policy's logout rules say); `.refreshUnavailable`
    ///   when the server could not be asked (the grant is kept); `.invalidInput` when the
    ///   refreshed grant holds a token with a character outside RFC 6749's VSCHAR (%x20-7E:
    ///   nothing is stored or returned, the old grant is kept); `.timedOut` when another
    ///   caller's refresh took longer than `deadline`; store and audit errors.
    public func accessToken(
        named name: String, account: String, deadline: Duration = .seconds(30), refresher: @escaping GrantRefresher
    ) throws -> SecretBytes? {
        try accessToken(named: name, account: account, deadline: deadline) { token in
            try Vault.waitFor(refresher, token)
        }
    }

    /// See the synchronous ``accessToken(named:account:deadline:refresher:)``. The
    /// read runs on the vault's queue, as every `async` call's does; a refresh (the
    /// wait for the lock, the refresher, the save) runs on a thread of its own, so
    /// callers waiting for one never hold the threads Dispatch and the refresher need.
    public func accessToken(
        named name: String, account: String, deadline: Duration = .seconds(30), refresher: @escaping GrantRefresher
    ) async throws -> SecretBytes? {
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        switch try await Vault.offload({
            self.beginOperation()
            return try self.firstRead(key)
        }) {
        case .done(let grant):
            return grant?.accessToken
        case .due:
            return try await Vault.onOwnThread {
                try self.refreshUnderLock(key, deadline: deadline) { token in try Vault.waitFor(refresher, token) }
            }?.accessToken
        }
    }

    /// See the synchronous ``saveGrant(_:name:account:)-6ntoj``.
    @discardableResult
    public func saveGrant(_ grant: Grant, name: String, account: String) async throws -> Date {
        try await Vault.offload { try self.saveGrant(grant, name: name, account: account) }
    }

    /// See the synchronous ``grant(named:account:)``.
    public func grant(named name: String, account: String) async throws -> Grant? {
        try await Vault.offload { try self.grant(named: name, account: account) }
    }

    /// `accessToken(named:account:deadline:refresher:)` with a refresher that
    /// blocks (the command line's, which runs a command).
    package func accessToken(
        named name: String, account: String, deadline: Duration,
        refreshingWith refresh: (SecretBytes) throws -> RefreshOutcome
    ) throws -> SecretBytes? {
        try validGrant(named: name, account: account, deadline: deadline, refreshingWith: refresh)?.accessToken
    }

    /// The grant whose access token `accessToken(named:account:deadline:refresher:)`
    /// returns (a plain token as a grant with the session's expiry), for callers
    /// that show its expiry too.
    package func validGrant(
        named name: String, account: String, deadline: Duration,
        refreshingWith refresh: (SecretBytes) throws -> RefreshOutcome
    ) throws -> Grant? {
        beginOperation()
        let key = ItemKey(kind: .session, account: account, name: name)
        try key.requireNameLengths()
        switch try firstRead(key) {
        case .done(let grant): return grant
        case .due: return try refreshUnderLock(key, deadline: deadline, refreshingWith: refresh)
        }
    }

    /// What the first, unlocked read of a session found.
    enum FirstRead: Sendable {
        /// The answer: a valid grant (a plain token as a grant with the session's expiry), or nil.
        case done(Grant?)
        /// A grant whose refresh is due.
        case due
    }

    /// The first read: one audited read, as ``Vault/session(named:account:)-k6m0``'s.
    func firstRead(_ key: ItemKey) throws -> FirstRead {
        guard let read = try readLiveSession(key) else { return .done(nil) }
        guard GrantRecord.isGrant(read.value) else {
            return .done(Grant(accessToken: read.value, accessTokenExpires: read.expires))
        }
        let first = try GrantRecord.decode(read.value)
        return first.isRefreshDue(at: grantClock(), issued: read.created) ? .due : .done(first)
    }

    /// The refresh: under the namespace's refresh lock, reads again, adopts a grant
    /// another caller rotated meanwhile, else refreshes and settles.
    func refreshUnderLock(
        _ key: ItemKey, deadline: Duration, refreshingWith refresh: (SecretBytes) throws -> RefreshOutcome
    ) throws -> Grant? {
        try withRefreshLock(deadline: deadline) {
            // Another caller may have refreshed while this one waited: adopt its grant.
            guard let item = try backend.read(key), !item.isExpired(at: grantClock()),
                GrantRecord.isGrant(item.value)
            else {
                // The session is gone (a logout wins): an answer kept for it is moot.
                _ = try pendingAnswer(for: key, holding: nil)
                return nil
            }
            let current = try GrantRecord.decode(item.value)
            // A rotation that a caller, in any process, received and could not save: save it now,
            // never spend the old token again.
            if let answer = try pendingAnswer(for: key, holding: current.refreshToken) {
                return try settleKeeping(.refreshed(answer), of: current, key: key)
            }
            let now = grantClock()
            if !current.isRefreshDue(at: now, issued: item.created) { return current }
            guard let used = current.refreshToken else {
                return current.accessTokenExpires.map { $0 > now } == true ? current : nil
            }
            guard try proveSavable(key, item) else { return nil }
            return try settleKeeping(refresh(used), of: current, key: key)
        }
    }

    /// Proves that the session's grant can be saved before its refresh token is spent: writes
    /// the stored item back, unchanged, under the commit lock (only while the session still
    /// holds it, so a logout is never undone). A provider that asks before a process replaces
    /// an item (KeePassXC's access request) asks now, and a store that cannot be written fails
    /// now, before the endpoint sees the token.
    /// - Returns: false when the session no longer holds this item (nothing is refreshed).
    /// - Throws: The store's error: the refresh token is not spent.
    private func proveSavable(_ key: ItemKey, _ item: StoredItem) throws -> Bool {
        try withCommitLock {
            guard let stored = try backend.read(key), stored.value == item.value else { return false }
            try backend.write(stored, for: key)
            return true
        }
    }

    /// ``settle(_:of:key:)``, keeping a rotated grant whose save failed (``keepPendingRotation(_:replacing:for:)``),
    /// so the next refresh of the session, in this process or another, saves it instead of
    /// presenting the spent refresh token again.
    private func settleKeeping(_ outcome: RefreshOutcome, of previous: Grant, key: ItemKey) throws -> Grant? {
        let settled: Grant?
        do {
            settled = try settle(outcome, of: previous, key: key)
        } catch let error as LatchkeyError {
            guard case .refreshed(let response) = outcome, error.code != .invalidInput else { throw error }
            let kept =
                if let diskError = keepPendingRotation(response, replacing: previous.refreshToken, for: key) {
                    "this process keeps it and saves it at its next call instead of refreshing again (it could not be kept on disk: \(diskError.message))"
                } else {
                    "it is kept and saved at the next call, in this process or another, instead of refreshing again"
                }
            throw LatchkeyError(
                error.code, "the rotated grant of session '\(key.name)' could not be saved (\(error.message)); \(kept)",
                cFunction: error.cFunction, errnoCode: error.errnoCode)
        }
        try forgetPendingRotations(removingEmptyVault: true) { $0 == key }
        return settled
    }

    /// Saves, ends or keeps the grant after a refresh, under the refresh lock,
    /// recorded as `session.refreshed`. The write is conditional: only a session
    /// still holding the grant the refresh used is replaced or ended. The second
    /// read and the write run under the commit lock, which every deletion of
    /// sessions takes too, so a logout cannot land between them.
    private func settle(_ outcome: RefreshOutcome, of previous: Grant, key: ItemKey) throws -> Grant? {
        try performCommitting(.sessionRefreshed, account: key.account, detail: key.name) { changes in
            let stored = try backend.read(key)
            let storedGrant = try stored.flatMap {
                GrantRecord.isGrant($0.value) ? try GrantRecord.decode($0.value) : nil
            }
            let unchanged = storedGrant != nil && storedGrant?.refreshToken == previous.refreshToken
            Vault.conditionalWriteChecked()
            switch outcome {
            case .refreshed(let response):
                guard unchanged else {
                    return OperationOutcome(storedGrant, .skipped, detail: "\(key.name): a newer grant is kept")
                }
                try response.requireVisibleTokens(what: "the refreshed grant of session '\(key.name)'")
                let grant = previous.rotated(by: response)
                let item = try grantItem(grant, name: key.name, created: grantClock())
                try changes.willChange(key, in: backend)
                try backend.write(item, for: key)
                return OperationOutcome(grant)
            case .rejected(let reason):
                if unchanged { try endSession(key, changes: changes) }
                throw LatchkeyError(
                    .refreshRejected,
                    "the server rejected the refresh of session '\(key.name)' (\(reason)); the session has ended, log in again"
                )
            case .unavailable(let reason):
                throw LatchkeyError(
                    .refreshUnavailable,
                    "session '\(key.name)' could not be refreshed (\(reason)); its grant is kept, try again later")
            }
        }
    }

    /// Ends a session whose refresh was rejected, as a logout of its account
    /// would: the grant always, the account's other sessions and the remembered
    /// username as the policy's `onLogout` says.
    private func endSession(_ key: ItemKey, changes: ChangeLog) throws {
        var doomed = [key]
        if policy.sessionsOnLogout == .wipe {
            doomed += try backend.list(kind: .session).filter { $0.account == key.account && $0 != key }
        }
        if policy.usernameOnLogout == .forget || !policy.remembersUsernames,
            try backend.read(Vault.usernameItem) != nil
        {
            doomed.append(Vault.usernameItem)
        }
        for doomedKey in doomed { try changes.willChange(doomedKey, in: backend) }
        try recordTombstones(doomed.map { .item($0) })
        try store.delete(doomed)
        try forgetPendingRotations(removingEmptyVault: true) { doomed.contains($0) }
        // A leftover file vault that can be opened loses them too, so the migration never brings them back.
        if backend.kind != .file, let fileVault, try fileVaultExists() {
            for doomedKey in doomed { try changes.willChange(doomedKey, in: fileVault) }
            try fileVault.delete(doomed)
        }
    }

    /// The stored item of a grant created at `created`: it lives as long as the
    /// refresh token (the access token without one), capped by the policy.
    private func grantItem(_ grant: Grant, name: String, created: Date) throws -> StoredItem {
        let lives = grant.refreshToken == nil ? grant.accessTokenExpires : grant.refreshTokenExpires
        if let lives, lives <= created {
            throw LatchkeyError(
                .invalidInput,
                "the grant of session '\(name)' expired at \(lives.formatted(.iso8601)), which has passed; nothing was stored"
            )
        }
        let expiry = policy.sessionExpiry(requested: lives, created: created)
        return StoredItem(value: GrantRecord.encode(grant), created: created, expires: expiry)
    }

    /// Reads a session item, audited as ``Vault/session(named:account:)-k6m0`` reads it: an
    /// expired one is deleted and recorded as `session.expired`.
    func readLiveSession(_ key: ItemKey) throws -> StoredItem? {
        try perform(.sessionRead, account: key.account, detail: key.name) { changes in
            guard let item = try backend.read(key) else { return .unrecorded(nil) }
            if item.isExpired(at: grantClock()) {
                try changes.willChange(key, in: backend)
                try backend.delete(key)
                return OperationOutcome(nil, event: .sessionExpired)
            }
            return OperationOutcome(item)
        }
    }

    /// Runs `body` as the one caller refreshing or replacing this namespace's grants:
    /// under the namespace directory's lock file (every thread, process and agent), or,
    /// for a vault kept in memory, under its store's lock (every vault on that store).
    func withRefreshLock<R>(deadline: Duration, _ body: () throws -> R) throws -> R {
        try withLock(.refresh, deadline: deadline, body)
    }

    /// How long a deletion of sessions, or a refresh about to settle, waits for the commit
    /// lock: its holder runs no app code, only a few store calls, each under its own deadline.
    static let commitDeadline = Duration.seconds(30)

    /// Runs `body` under the namespace's commit lock (``RefreshLock/Kind/commit``): a
    /// refresh settling, or a change to sessions that a refresh settling must not cross.
    /// - Throws: `LatchkeyError` `.timedOut` when another holder kept it for longer than
    ///   ``commitDeadline`` (nothing was changed); what `body` throws.
    func withCommitLock<R>(_ body: () throws -> R) throws -> R {
        try withLock(.commit, deadline: Vault.commitDeadline, body)
    }

    private func withLock<R>(_ kind: RefreshLock.Kind, deadline: Duration, _ body: () throws -> R) throws -> R {
        if let memoryLocks { return try RefreshLock.withLock(kind, of: memoryLocks, deadline: deadline, body) }
        guard let storeDirectory else { preconditionFailure("a vault has a store directory or is kept in memory") }
        return try RefreshLock.withLock(
            kind, in: NamespaceDirectory(appID: appID, storeDirectory: storeDirectory), deadline: deadline, body)
    }

    /// Runs an async refresher from a thread that may block, and waits for it.
    /// The refresher runs on a thread of its own (a task executor preference), not
    /// on Swift's cooperative pool or Dispatch's, so callers blocking threads of
    /// those (a synchronous test, the vault's own queue) cannot starve it.
    private static func waitFor(_ refresher: @escaping GrantRefresher, _ token: SecretBytes) throws -> RefreshOutcome {
        let result = RefreshResultBox()
        Task(executorPreference: try RefresherExecutor.shared()) {
            result.set(await refresher(token))
        }
        return result.wait()
    }
}

/// A rotated grant a vault received and could not save (``Vault/pendingRotations``).
struct PendingRotation: Sendable {
    /// The refresh token the refresh spent: the rotation applies only while the session still holds it.
    let previousRefreshToken: SecretBytes?
    /// What the endpoint issued.
    let response: Grant
}

/// Hands a refresher's outcome from its task to the thread waiting for it.
private final class RefreshResultBox: Sendable {
    private let outcome = Mutex<RefreshOutcome?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func set(_ value: RefreshOutcome) {
        outcome.withLock { $0 = value }
        ready.signal()
    }

    func wait() -> RefreshOutcome {
        ready.wait()
        return outcome.withLock { $0 }!
    }
}

/// Where refreshers run when a synchronous caller waits for them: one thread of
/// its own, so they never need a thread of the cooperative pool or of Dispatch's
/// (which has only as many as the machine has cores, and the callers waiting for a
/// refresh may hold them all).
private final class RefresherExecutor: TaskExecutor {
    private static let started = Mutex<RefresherExecutor?>(nil)
    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    /// The executor, its thread started on first use.
    /// - Throws: `LatchkeyError` `.io` when no thread can be made.
    static func shared() throws -> RefresherExecutor {
        try started.withLock { started in
            if let started { return started }
            let executor = RefresherExecutor()
            try POSIX.startThread { executor.run() }
            started = executor
            return executor
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    private func run() {
        while true {
            available.wait()
            guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
