import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An app namespace's audit trail: an append-only JSON Lines file
/// (`<directory>/<appid>.d/audit.<backend kind>.jsonl`, 0600 in a 0700 directory) whose entries
/// are chained by a keyed BLAKE2b MAC. The key is kept in a `CredentialBackend`
/// (read once per process), the last sequence number and MAC (the anchor) in a
/// small file beside the trail, authenticated with the key (``AuditAnchorFile``).
/// The format is specified in `docs/AUDIT-TRAIL.md`.
///
/// Appends are locked (`flock` on `audit.<backend kind>.lock` beside it) and durable (`fsync`)
/// before they return, so writers in several threads or processes never interleave partial
/// lines; under a deferral (``Vault/AuditDurability/deferred``, a server's) the `fsync` and the
/// anchor's move come once it has answered instead (``AuditSyncDeferral``).
/// ``verify()`` is read-only. No secret is ever written: the account appears
/// only as a keyed pseudonym and the detail is non-secret text.
///
/// Safe to share across tasks: its one piece of state, the key once read, is behind a lock.
/// A trail kept across operations (by a vault kept open) keeps that key, and reads it again
/// when it no longer verifies the trail (another process reset it).
package final class AuditTrail: Sendable {
    /// The app namespace.
    package let appID: AppID
    /// The store directory (the trail is in its namespace's directory inside it).
    package let directory: String
    /// The namespace whose trail this is; its directory holds the trail.
    let namespace: NamespaceDirectory
    /// The trail file's path.
    package let path: String
    /// The lock file's path.
    let lockPath: String
    /// The store that keeps the MAC key, by what it is.
    let store: Store
    /// The store that keeps the MAC key.
    package var backend: any CredentialBackend { store.backend }
    /// How much of the trail is kept.
    package let retention: AuditRetention
    /// The clock entries are stamped with (a seam for retention tests).
    let clock: @Sendable () -> Date
    /// Where an append leaves the `fsync` and the anchor's move when it defers them (a
    /// vault's, ``Vault/auditDurability``); nil: done before the append returns.
    let deferral: AuditSyncDeferral?

    /// The backend item holding the 32-byte MAC and pseudonym key.
    ///
    /// Each kind of backend keeps its own trail (`audit.<backend kind>.jsonl`)
    /// and its own key, so a fallback to the file while the Secret Service
    /// holding the other trail's key is unreachable never breaks a chain.
    package let keyItem: ItemKey
    /// The file beside the trail holding the anchor.
    let anchorFile: AuditAnchorFile
    /// The key, once read or created: read once, and again when it no longer verifies the trail.
    private let knownKey = Mutex<SecretBytes?>(nil)
    /// The length of an account pseudonym in bytes (it is written as twice as many hex digits).
    static let pseudonymLength = 8

    /// Opens (without touching the disk) the trail of `appID` in `directory`.
    /// - Parameters:
    ///   - appID: The app namespace; it names the file and is bound into every MAC.
    ///   - directory: The directory beside the vault (created 0700 on the first record).
    ///   - backend: The store that keeps the key and the anchor; the Vault passes the one it uses.
    ///   - retention: How much of the trail is kept; usually `policy.audit.retention`.
    package convenience init(
        appID: AppID, directory: String, backend: any CredentialBackend, retention: AuditRetention = .unbounded
    ) {
        self.init(
            appID: appID, directory: directory, store: .other(backend), retention: retention, clock: { Date() },
            deferral: nil)
    }

    /// The trail of `appID` on `backend`, a store kept by what it does alone (tests, and
    /// tools that read a trail).
    convenience init(
        appID: AppID, directory: String, backend: any CredentialBackend, retention: AuditRetention,
        clock: @escaping @Sendable () -> Date, deferral: AuditSyncDeferral? = nil
    ) {
        self.init(
            appID: appID, directory: directory, store: .other(backend), retention: retention, clock: clock,
            deferral: deferral)
    }

    /// - Parameters:
    ///   - store: The store that keeps the key and the anchor.
    ///   - deferral: Where appends leave the making durable of what they wrote while it
    ///     defers (``AuditSyncDeferral``); nil: each append is durable before it returns.
    init(
        appID: AppID, directory: String, store: Store, retention: AuditRetention,
        clock: @escaping @Sendable () -> Date, deferral: AuditSyncDeferral? = nil
    ) {
        let backend = store.backend
        let namespace = NamespaceDirectory(appID: appID, storeDirectory: directory)
        self.appID = appID
        self.namespace = namespace
        self.directory = namespace.storeDirectory
        self.path = namespace.trailPath(backend.kind)
        self.lockPath = namespace.trailLockPath(backend.kind)
        self.keyItem = ItemKey(kind: .key, name: "audit." + backend.kind.rawValue)
        self.anchorFile = AuditAnchorFile(path: namespace.trailAnchorPath(backend.kind), appID: appID)
        self.store = store
        self.retention = retention
        self.clock = clock
        self.deferral = deferral
    }

    /// Appends one entry, durably, and moves the anchor to it; trims the trail
    /// afterwards when it has outgrown ``retention``.
    ///
    /// The first record of a namespace creates the key in the backend and the
    /// anchor file; later records write nothing to the backend.
    /// - Parameters:
    ///   - event: What happened.
    ///   - outcome: How it ended.
    ///   - backend: The store the operation used.
    ///   - account: The account concerned, if any; only its keyed pseudonym is written.
    ///   - detail: Non-secret detail, such as `wiped 2 sessions (access, refresh); kept the username`;
    ///     one longer than 512 UTF-8 bytes is shortened with a mark that says so (``AuditEntry/shortened(_:)``).
    /// - Returns: The entry as written.
    /// - Throws: `LatchkeyError`: `.invalidInput` for a malformed event;
    ///   `.tampered` when the end of the trail does not match
    ///   the anchor, or the key is missing while a trail exists (nothing is
    ///   appended then, so a cut is never hidden); `.insecurePermissions`, `.io`
    ///   or the backend's errors when the entry cannot be written durably.
    @discardableResult
    package func record(
        _ event: AuditEvent, outcome: AuditOutcome, backend: BackendKind, account: String? = nil, detail: String? = nil
    ) throws -> AuditEntry {
        try withAppender { try $0.append(event, outcome: outcome, backend: backend, account: account, detail: detail) }
    }

    /// Opens the trail under its lock, checks that it can be continued (the
    /// key is there, the end matches the anchor), and runs `body` with an
    /// appender, so a caller can do its work between the check and the append
    /// while no other writer appends. Trims the trail afterwards when it has
    /// outgrown ``retention``. Nest no other append inside `body`: the lock is not re-entrant.
    /// - Parameter body: The work, appending what it records.
    /// - Returns: What `body` returns.
    /// - Throws: As ``record(_:outcome:backend:account:detail:)`` before `body`
    ///   runs; what `body` throws.
    package func withAppender<Result>(_ body: (Appender) throws -> Result) throws -> Result {
        try namespace.prepare()
        return try PrivateFiles.withExclusiveLock(lockPath) {
            let file = try POSIX.File.open(path, .readAppendCreate(permissions: 0o600))
            let status = try file.status()
            try PrivateFiles.requirePrivate(status, path: path, directory: false)
            let wasKept = knownKey.withLock { $0 != nil }
            var key = try keyCreatingIfFresh(trailSize: status.size)
            func chainHead() throws -> (
                anchor: (value: AuditAnchor?, counter: UInt64?), lastSequence: UInt64, previous: [UInt8]
            ) {
                let anchor = try readAnchor(key: key)
                let (lastSequence, previous) = try AuditTail(file: file, path: path, appID: appID, key: key)
                    .continuation(anchor: anchor.value)
                return (anchor, lastSequence, previous)
            }
            let (anchor, lastSequence, previous): ((value: AuditAnchor?, counter: UInt64?), UInt64, [UInt8])
            do {
                (anchor, lastSequence, previous) = try chainHead()
            } catch let error as LatchkeyError where error.code == .tampered && wasKept {
                // This key was kept from an earlier operation; another process may have
                // replaced it since (an audit reset). Read it again, as a new process would.
                store.forgetKnownKeys()
                knownKey.withLock { $0 = nil }
                key = try keyCreatingIfFresh(trailSize: status.size)
                (anchor, lastSequence, previous) = try chainHead()
            }
            let anchored = anchor.value?.sequence ?? lastSequence
            let appender = Appender(
                trail: self, file: file, key: key, lastSequence: lastSequence, previous: previous,
                anchored: anchored, anchorCounter: anchor.counter, deferral: deferral)
            let result = try body(appender)
            if appender.lastSequence > lastSequence {
                try trimIfNeeded(file: file, key: key, lastSequence: appender.lastSequence, now: clock()) {
                    try appender.anchorLast()
                }
            }
            return result
        }
    }

    #if LATCHKEY_TEST_SEAMS
        /// A test seam (only in a build with LATCHKEY_TEST_SEAMS=1, as `make test` makes): when set for the current task, every
        /// append calls it just before writing, and a throw stands for a write that failed.
        @TaskLocal static var appendFailure: (@Sendable () throws -> Void)?
        /// A test seam (only in a build with LATCHKEY_TEST_SEAMS=1, as `make test` makes): when set for the
        /// current task, the making of a new trail calls it after each of its steps with the step's number,
        /// and a throw stands for a crash right after that step.
        @TaskLocal static var creationStepObserver: (@Sendable (Int) throws -> Void)?
    #endif

    /// Tells the test seam, where it is compiled, that step `step` of a trail's making is done.
    private static func creationStepDone(_ step: Int) throws {
        #if LATCHKEY_TEST_SEAMS
            try creationStepObserver?(step)
        #endif
    }

    /// A trail opened and checked under its lock by ``withAppender(_:)``.
    package final class Appender {
        private let trail: AuditTrail
        private let file: POSIX.File
        private let key: SecretBytes
        /// The last entry's sequence number.
        private(set) var lastSequence: UInt64
        private var previous: [UInt8]
        /// The sequence number the anchor names: the last entry's, or the one before it
        /// when that entry's append was deferred (or a crash came before its anchor moved).
        private(set) var anchoredSequence: UInt64
        private var anchorCounter: UInt64?
        private let deferral: AuditSyncDeferral?

        init(
            trail: AuditTrail, file: POSIX.File, key: SecretBytes, lastSequence: UInt64, previous: [UInt8],
            anchored: UInt64, anchorCounter: UInt64?, deferral: AuditSyncDeferral?
        ) {
            self.deferral = deferral
            self.trail = trail
            self.file = file
            self.key = key
            self.lastSequence = lastSequence
            self.previous = previous
            self.anchoredSequence = anchored
            self.anchorCounter = anchorCounter
        }

        /// Appends one entry durably (`write`, `fsync`), then moves the anchor to it.
        /// Under a deferral (``AuditSyncDeferral``) the entry is written and the rest left to it:
        /// until then the trail is one entry past its anchor, as a crash between the two
        /// steps leaves it, which every reader accepts. The entry past the anchor that
        /// such an append (or a crash) left is anchored first, so the trail is never
        /// more than one entry ahead of its anchor, on disk or in memory.
        /// - Throws: `.invalidInput` for a malformed event or an overlong
        ///   detail (nothing written); file errors.
        @discardableResult
        package func append(
            _ event: AuditEvent, outcome: AuditOutcome, backend: BackendKind, account: String? = nil,
            detail: String? = nil
        ) throws -> AuditEntry {
            try anchorLast()
            let entry = try AuditEntry.chained(
                event, outcome: outcome, backend: backend, account: account, detail: detail,
                after: (lastSequence, previous), at: trail.clock(), key: key, appID: trail.appID)
            #if LATCHKEY_TEST_SEAMS
                try AuditTrail.appendFailure?()
            #endif
            try file.writeAll(Array((entry.jsonLine + "\n").utf8))
            lastSequence = entry.sequence
            previous = entry.chainValue
            if let deferral, deferral.isDeferring {
                deferral.add(
                    DeferredAppend(
                        trail: trail, file: file, key: key, entry: AuditAnchor(sequence: lastSequence, mac: previous),
                        anchorCounter: anchorCounter, size: try file.status().size))
            } else {
                try anchorLast()
            }
            return entry
        }

        /// Makes the last entry durable (`fsync`) and moves the anchor to it, when the
        /// anchor is not there yet.
        /// - Throws: file errors.
        func anchorLast() throws {
            guard lastSequence > anchoredSequence else { return }
            try file.sync()
            anchorCounter = try trail.anchorFile.write(
                AuditAnchor(sequence: lastSequence, mac: previous), after: anchorCounter, key: key)
            anchoredSequence = lastSequence
        }
    }

    /// Checks the whole trail: every line's form, sequence and MAC, the start
    /// (seq 1, a valid checkpoint, or a reset's first entry) and the end against
    /// the anchor, as far as the anchor file's state allows (``AuditAnchor/following``).
    ///
    /// Read-only: it appends nothing, moves no anchor and creates no file or
    /// key, so verifying twice gives the same answer. A trail that should exist is
    /// never empty: with the key in the store a missing or invalid anchor is broken
    /// (a missing trail file with the genesis anchor is empty); without the key, a
    /// trail file, an anchor or a segment an earlier reset kept is broken. Only a
    /// namespace with none of these is intact and empty.
    /// - Returns: ``AuditVerification/intact(entryCount:lastSequence:)``, or the
    ///   first bad sequence number and why.
    /// - Throws: `LatchkeyError` when the backend or the file cannot be read
    ///   (`.insecurePermissions` when the file is accessible to others).
    package func verify() throws -> AuditVerification {
        // The anchor is read before the file: appends write the file first, so
        // a concurrent append can never make the anchor look ahead of the file.
        // The key is read afresh: verifying must notice a key deleted since this process read it.
        guard let key = try storedKey(afresh: true) else {
            let anchorExists = try POSIX.status(of: anchorFile.path) != nil
            let segments = try keptSegments()
            if try readFile().isEmpty && !anchorExists && segments.isEmpty {
                return .intact(entryCount: 0, lastSequence: 0)
            }
            let sign =
                segments.isEmpty
                ? "" : " (a trail existed: a reset kept \(PrivateFiles.baseName(of: segments[segments.count - 1])))"
            return .broken(
                sequence: 1,
                reason:
                    "the audit key is missing from the \(backend.kind) store, so \(path) cannot be verified\(sign)")
        }
        // The making file before the anchor: the making renames the one into the other.
        let making = try interruptedMakingAnchor(key: key)
        let anchor = try readAnchor(key: key).value ?? making
        return AuditChain(appID: appID, path: path, key: key, keyStore: backend.kind).check(
            try readFile(), anchor: anchor
        ).0
    }

    /// The entries after `sequence`, for display; the MACs are not checked (use ``verify()``).
    /// - Parameter sequence: Only entries with a greater sequence number; all when nil.
    /// - Returns: The entries, oldest first.
    /// - Throws: `.tampered` naming the line when a line is not an entry; file errors.
    package func entries(since sequence: UInt64? = nil) throws -> [AuditEntry] {
        var entries: [AuditEntry] = []
        for (index, line) in try readFile().split(separator: 10).enumerated() {
            let entry = try AuditEntry(line: line, source: "\(path) line \(index + 1)")
            if sequence.map({ entry.sequence > $0 }) ?? true { entries.append(entry) }
        }
        return entries
    }

    /// The segments earlier resets set aside (`audit.<backend kind>.jsonl.reset-<milliseconds>`),
    /// oldest first.
    /// - Throws: `LatchkeyError` when the namespace's directory cannot be read.
    func keptSegments() throws -> [String] {
        guard try POSIX.status(of: namespace.path) != nil else { return [] }
        let prefix = PrivateFiles.baseName(of: path) + ".reset-"
        let segments = try POSIX.directoryEntries(namespace.path).compactMap { name -> (UInt64, String)? in
            guard name.hasPrefix(prefix), let milliseconds = UInt64(name.dropFirst(prefix.count)) else { return nil }
            return (milliseconds, namespace.file(name))
        }
        return segments.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Every `audit.reset` entry of this trail and of the segments earlier resets kept,
    /// oldest first: each reset is the first entry of the chain it started, and the
    /// next reset kept that chain as a segment. A segment is read line by line for
    /// display, its MACs unchecked (it was set aside for not verifying); a line that
    /// is not an entry is skipped, so one damaged segment does not hide the others' resets.
    /// - Returns: The entries, oldest first.
    /// - Throws: `LatchkeyError` when a file cannot be read.
    package func resets() throws -> [AuditEntry] {
        var resets: [AuditEntry] = []
        for file in try keptSegments() + [path] {
            let bytes = try readFile(file)
            resets += bytes.split(separator: 10).compactMap { try? AuditEntry(line: $0, source: file) }
                .filter { $0.event == .auditReset }
        }
        return resets
    }

    /// The keyed pseudonym the trail writes for `account`: 16 hex digits of a
    /// keyed BLAKE2b, the same for the same account within this trail, so
    /// an auditor can follow one account without learning it.
    ///
    /// Creates the key when the namespace has no trail yet.
    /// - Parameter account: The account, such as a username.
    /// - Returns: The pseudonym.
    /// - Throws: `.tampered` when the key is missing while a trail exists; file and backend errors.
    package func pseudonym(for account: String) throws -> String {
        if let key = try storedKey() { return try pseudonym(for: account, key: key) }
        try namespace.prepare()
        return try PrivateFiles.withExclusiveLock(lockPath) {
            try pseudonym(for: account, key: keyCreatingIfFresh(trailSize: POSIX.status(of: path)?.size ?? 0))
        }
    }

    private func pseudonym(for account: String, key: SecretBytes) throws -> String {
        AuditTrail.pseudonym(for: account, key: key, appID: appID)
    }

    /// The keyed pseudonym of `account` in the trail of `appID` under `key`.
    static func pseudonym(for account: String, key: SecretBytes, appID: AppID) -> String {
        // NFC, as every store keys the account (CanonicalText): one account, one pseudonym.
        let message =
            Array("latchkey.audit.v1 pseudonym".utf8) + [0] + Array(appID.rawValue.utf8) + [0]
            + Array(CanonicalText.nfc(account).utf8)
        return Hex.encode(Sodium.keyedHash(message, key: key).prefix(Self.pseudonymLength))
    }

    /// The key: the one this process already read, else the backend's (read
    /// once and kept); nil when the backend has none.
    /// - Throws: `.tampered` when the stored key has the wrong length; backend errors.
    func storedKey(afresh: Bool = false) throws -> SecretBytes? {
        if !afresh, let key = knownKey.withLock({ $0 }) { return key }
        guard let key = try backend.read(keyItem)?.value else { return nil }
        guard key.count == Sodium.genericHashKeyLength else {
            throw LatchkeyError(
                .tampered,
                "the audit key kept in the \(backend.kind) store has the wrong length; \(AuditTrail.resetAdvice)")
        }
        knownKey.withLock { $0 = key }
        return key
    }

    /// Makes `key` the one this process uses, after a reset created it.
    func adopt(key: SecretBytes) {
        knownKey.withLock { $0 = key }
    }

    /// The key, created with a genesis anchor when the namespace has neither a
    /// key, nor entries, nor an anchor. Call it while holding the lock.
    ///
    /// The making is crash-atomic: the genesis anchor is written, under the new key, to
    /// ``makingAnchorFile`` first, then the key is stored, then that file is renamed into
    /// place (and the directory synced). A crash before the key is stored leaves a making
    /// file no key opens, which the next making removes; a crash after it leaves a making
    /// file the stored key opens, which the next making (or ``verify()``, read-only) takes
    /// as the genesis anchor. So a crash never leaves a key without its anchor.
    private func keyCreatingIfFresh(trailSize: Int) throws -> SecretBytes {
        try finishInterruptedMaking(trailSize: trailSize)
        if let key = try storedKey() { return key }
        guard trailSize == 0, try POSIX.status(of: anchorFile.path) == nil else {
            throw LatchkeyError(
                .tampered,
                "the audit key is missing from the \(backend.kind) store although \(path) has entries or an anchor; not appending to a trail that cannot be verified; \(AuditTrail.resetAdvice)"
            )
        }
        let key = SecretBytes.random(count: Sodium.genericHashKeyLength)
        try makingAnchorFile.write(.genesis, after: nil, key: key)
        try Self.creationStepDone(1)
        try backend.write(StoredItem(value: key), for: keyItem)
        try Self.creationStepDone(2)
        try POSIX.rename(makingAnchorFile.path, to: anchorFile.path)
        try POSIX.syncDirectory(namespace.path)
        try Self.creationStepDone(3)
        knownKey.withLock { $0 = key }
        return key
    }

    /// The anchor file of a trail being made (`audit.<backend kind>.anchor.making`): its
    /// genesis anchor, under the new key, until the key is stored and it is renamed into place.
    var makingAnchorFile: AuditAnchorFile {
        AuditAnchorFile(path: anchorFile.path + ".making", appID: appID)
    }

    /// Finishes or forgets a making of this trail that a crash cut short
    /// (``keyCreatingIfFresh(trailSize:)``): with the stored key opening the making file,
    /// no anchor and no entry, the making file is renamed into place; otherwise it is
    /// removed (it was made under a key that was never stored). Call it while holding the lock.
    private func finishInterruptedMaking(trailSize: Int) throws {
        guard try POSIX.status(of: makingAnchorFile.path) != nil else { return }
        if let key = try storedKey(afresh: true), trailSize == 0, try POSIX.status(of: anchorFile.path) == nil,
            try interruptedMakingAnchor(key: key) != nil
        {
            try POSIX.rename(makingAnchorFile.path, to: anchorFile.path)
        } else {
            try POSIX.removeFile(makingAnchorFile.path)
        }
        try POSIX.syncDirectory(namespace.path)
    }

    /// The genesis anchor of a making cut short after its key was stored: the making file's,
    /// when `key` opens it and it names no entry; nil otherwise.
    func interruptedMakingAnchor(key: SecretBytes) throws -> AuditAnchor? {
        guard case .anchor(let anchor, _) = try makingAnchorFile.read(key: key), anchor.sequence == 0 else {
            return nil
        }
        return .genesis
    }

    /// What to do about a broken trail, for error messages.
    /// It names the library call; the command line adds its own command (``Vault/resetAuditTrail()``).
    package static let resetAdvice =
        "`Vault.resetAuditTrail()` keeps the broken trail aside and starts a new one"

    /// The anchor: the anchor file's newest valid slot.
    /// - Returns: The anchor (nil when there is none or the file holds no valid
    ///   slot) and the file's write counter.
    func readAnchor(key: SecretBytes) throws -> (value: AuditAnchor?, counter: UInt64?) {
        switch try anchorFile.read(key: key) {
        case .anchor(let anchor, let counter): return (anchor, counter)
        case .invalid, .absent: return (nil, nil)
        }
    }

    /// The bytes of the trail (or of one of its kept segments); empty when it does not exist.
    func readFile(_ path: String? = nil) throws -> [UInt8] {
        let path = path ?? self.path
        let file: POSIX.File
        do {
            file = try POSIX.File.open(path, .read)
        } catch let error as LatchkeyError where error.code == .notFound {
            return []
        }
        try PrivateFiles.requirePrivate(file.status(), path: path, directory: false)
        return try file.readAll(limit: Self.maximumFileLength, what: "an audit trail")
    }

    /// The most bytes read of a whole trail (`verify`, `show`, a trim): 1 GiB, checked
    /// against the file's size first. A line is at most about 3.4 KB (a 512-byte detail
    /// escaped), so 260,000 of the longest entries or millions of ordinary ones; the
    /// default retention (10,000 entries) keeps a trail under 40 MB.
    static let maximumFileLength = 1 << 30

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000).rounded(.down))
    }
}
