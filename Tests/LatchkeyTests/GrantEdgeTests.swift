import Foundation
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

@testable import Latchkey

/// Grants at the edges (issue 34): tokens outside RFC 6749's VSCHAR, and refreshes that
/// are cancelled or whose save fails.
@Suite("Grants at the edges", .sandboxed)
struct GrantEdgeTests {
    /// Tokens holding a character outside VSCHAR (%x20-7E): a newline, a NUL, a terminal escape, DEL, UTF-8.
    static let unprintable = ["a\nb", "a\u{0}b", "a\u{1B}[31mb", "a\u{7F}", "a\u{E9}", "a\rX-Injected: 1"]

    @Test("a token response whose access or refresh token holds a character outside VSCHAR is refused (65)")
    func responseRefused() throws {
        for token in Self.unprintable {
            let escaped = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
            for body in [
                #"{"access_token":\#(escaped),"token_type":"Bearer"}"#,
                #"{"access_token":"ok","token_type":"Bearer","refresh_token":\#(escaped)}"#,
            ] {
                #expect(throws: LatchkeyError(.invalidInput, "")) { try Grant(tokenResponse: SecretBytes(utf8: body)) }
                do {
                    _ = try Grant(tokenResponse: SecretBytes(utf8: body))
                } catch let error as LatchkeyError {
                    #expect(error.message.contains("VSCHAR") && !error.message.contains(token), "\(error.message)")
                }
            }
        }
        let space = try Grant(tokenResponse: SecretBytes(utf8: #"{"access_token":"a b~","token_type":"Bearer"}"#))
        #expect(space.accessToken == SecretBytes(utf8: "a b~"), "every VSCHAR is kept")
    }

    @Test(
        "a refresher's grant with a token outside VSCHAR is refused (65), never stored or returned",
        arguments: TestedStore.allCases)
    func refreshedGrantRefused(store: TestedStore) throws {
        let vault = try store.withExpiredGrant()
        for (index, token) in Self.unprintable.enumerated() {
            let bad = SecretBytes(utf8: token)
            let grants = [
                Grant(accessToken: bad, accessTokenExpires: Date().addingTimeInterval(3600)),
                Grant(
                    accessToken: SecretBytes(utf8: "a\(index)"), accessTokenExpires: Date().addingTimeInterval(3600),
                    refreshToken: bad),
            ]
            for grant in grants {
                #expect(throws: LatchkeyError(.invalidInput, "")) {
                    try vault.accessToken(named: "s", account: "alice") { _ in .refreshed(grant) }
                }
                #expect(throws: LatchkeyError(.invalidInput, "")) {
                    try vault.saveGrant(grant, name: "other", account: "alice")
                }
                #expect(try vault.grant(named: "other", account: "alice") == nil)
            }
        }
        let kept = try #require(try store.reopen(vault).grant(named: "s", account: "alice"))
        #expect(kept.refreshToken == SecretBytes(utf8: "r0") && kept.accessToken == SecretBytes(utf8: "a0"))
    }

    @Test(
        "an async caller cancelled during its refresh: the refresh finishes and its grant is saved",
        arguments: TestedStore.allCases)
    func cancelledCaller(store: TestedStore) async throws {
        let vault = try store.withExpiredGrant()
        let started = AsyncStream<Void>.makeStream()
        let release = Mutex(false)
        let sawCancellation = Mutex(false)
        let caller = Task {
            try await vault.accessToken(named: "s", account: "alice") { token in
                started.continuation.yield()
                while !release.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
                sawCancellation.withLock { $0 = Task.isCancelled }
                return .refreshed(
                    Grant(
                        accessToken: SecretBytes(utf8: "a1"), accessTokenExpires: Date().addingTimeInterval(3600),
                        refreshToken: SecretBytes(utf8: "r1"), refreshTokenExpires: Date().addingTimeInterval(86_400)))
            }
        }
        for await _ in started.stream { break }
        caller.cancel()
        release.withLock { $0 = true }
        let token = try await caller.value
        #expect(token == SecretBytes(utf8: "a1") && !sawCancellation.withLock { $0 })
        let saved = try #require(try await store.reopen(vault).grant(named: "s", account: "alice"))
        #expect(saved.refreshToken == SecretBytes(utf8: "r1"), "the rotated grant was saved")
    }

    /// A vault on a key-file store whose session writes fail as `failures` says, in order (true: fails).
    private static func flakyVault(_ failures: [Bool], policy: Policy = .default, purpose: String = #function) throws
        -> (Vault, FlakySessionWrites)
    {
        let appID = try SecretServiceTestSupport.freshAppID(purpose.filter { $0.isLetter })
        let directory = try freshDirectory(purpose) + "/store"
        let backend = FlakySessionWrites(
            EncryptedFileBackend(appID: appID, directory: directory, keySource: fastPassphrase()))
        let vault = try Vault(appID: appID, policy: policy, storeDirectory: directory, store: backend, clock: .system)
        try vault.saveGrant(expiredGrant(), name: "s", account: "alice")
        backend.schedule(failures)
        return (vault, backend)
    }

    @Test("a store that cannot save the grant fails before the refresh token is spent: the refresher is never called")
    func provesSavableFirst() throws {
        let (vault, _) = try Self.flakyVault([true])
        let refresher = CountingRefresher.rotating()
        #expect(throws: LatchkeyError(.io, "")) {
            try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        }
        #expect(refresher.calls == 0, "the endpoint never saw the refresh token")
        #expect(
            try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
                == SecretBytes(utf8: "a1"))
        #expect(refresher.usedTokens == ["r0"])
    }

    @Test(
        "a save that fails after the endpoint answered: the next call saves that answer and never presents the old token"
    )
    func failedSaveIsRecovered() throws {
        // The first session write (proving the grant can be saved) passes; the save of the rotated grant fails.
        let (vault, _) = try Self.flakyVault([false, true])
        let refresher = CountingRefresher.rotating()
        #expect(throws: LatchkeyError(.io, "")) {
            try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        }
        #expect(refresher.calls == 1)
        let token = try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        #expect(token == SecretBytes(utf8: "a1") && refresher.usedTokens == ["r0"], "\(refresher.usedTokens)")
        let saved = try #require(try vault.grant(named: "s", account: "alice"))
        #expect(saved.refreshToken == SecretBytes(utf8: "r1"), "the endpoint's answer was saved")
    }

    /// Another vault on the store of `vault` (another process of the app, on the same namespace).
    private static func nextProcess(of vault: Vault) throws -> Vault {
        let directory = try #require(vault.storeDirectory)
        return try Vault(
            appID: vault.appID, policy: vault.policy, storeDirectory: directory,
            store: EncryptedFileBackend(appID: vault.appID, directory: directory, keySource: fastPassphrase()),
            clock: .system)
    }

    /// The path of the namespace's pending-rotation vault.
    private static func pendingVault(of vault: Vault) throws -> String {
        NamespaceDirectory(appID: vault.appID, storeDirectory: try #require(vault.storeDirectory))
            .file("pending.vault")
    }

    @Test(
        "a save that fails after the endpoint answered: the next process saves that answer, with no refresher call and the old token never presented",
        arguments: [Policy.default, .strict])
    func failedSaveIsRecoveredByAnotherProcess(policy: Policy) throws {
        let (vault, _) = try Self.flakyVault([false, true], policy: policy, purpose: policy.name)
        let refresher = CountingRefresher.rotating()
        #expect(throws: LatchkeyError(.io, "")) {
            try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        }
        #expect(refresher.calls == 1)
        #expect(FileManager.default.fileExists(atPath: try Self.pendingVault(of: vault)), "the answer is kept on disk")
        let next = try Self.nextProcess(of: vault)
        let token = try next.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        #expect(token == SecretBytes(utf8: "a1"))
        #expect(refresher.calls == 1 && refresher.usedTokens == ["r0"], "\(refresher.usedTokens)")
        let saved = try #require(try Self.nextProcess(of: vault).grant(named: "s", account: "alice"))
        #expect(saved.refreshToken == SecretBytes(utf8: "r1"), "the endpoint's answer was saved")
        #expect(!FileManager.default.fileExists(atPath: try Self.pendingVault(of: vault)), "deleted once saved")
    }

    @Test(
        "a save that fails after the endpoint answered, and the next process cannot save it either: it fails, never presenting the old token"
    )
    func failedSaveStillUnsavable() throws {
        let (vault, backend) = try Self.flakyVault([false, true])
        let refresher = CountingRefresher.rotating()
        #expect(throws: LatchkeyError(.io, "")) {
            try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        }
        let next = try Vault(
            appID: vault.appID, policy: .default, storeDirectory: try #require(vault.storeDirectory),
            store: backend, clock: .system)
        backend.schedule([true])
        #expect(throws: LatchkeyError(.io, "")) {
            try next.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        }
        #expect(refresher.calls == 1, "the old token was not presented again")
        let token = try Self.nextProcess(of: vault).accessToken(
            named: "s", account: "alice", refresher: refresher.refresher)
        #expect(token == SecretBytes(utf8: "a1") && refresher.usedTokens == ["r0"], "\(refresher.usedTokens)")
    }

    @Test(
        "a logout between a failed save and the next call wins: the kept answer is dropped and never brings the session back",
        arguments: [false, true])
    func logoutWinsOverPendingRotation(loginAgain: Bool) throws {
        let (vault, _) = try Self.flakyVault([false, true])
        let refresher = CountingRefresher.rotating()
        #expect(throws: LatchkeyError(.io, "")) {
            try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        }
        try Self.nextProcess(of: vault).logout(account: "alice")
        let kept = PendingRotationVault(appID: vault.appID, directory: try #require(vault.storeDirectory))
        #expect(try kept.store.list(kind: .session).isEmpty, "a logout removes the kept answer")
        let next = try Self.nextProcess(of: vault)
        if loginAgain {
            // A new login whose grant happens to carry the same refresh token still does not adopt the old answer.
            try next.saveGrant(expiredGrant(access: "b0", refresh: "r0"), name: "s", account: "alice")
            let fresh = CountingRefresher.rotating()
            #expect(try next.accessToken(named: "s", account: "alice", refresher: fresh.refresher) != nil)
            #expect(fresh.calls == 1, "the new login refreshes for itself")
        } else {
            #expect(try next.accessToken(named: "s", account: "alice", refresher: refresher.refresher) == nil)
            #expect(try next.grant(named: "s", account: "alice") == nil, "the session stays logged out")
        }
        #expect(refresher.calls == 1)
    }

    @Test("a wipe or a deletion of the session after a failed save removes the kept answer (a wipe its file too)")
    func wipeRemovesPendingRotation() throws {
        for wipes in [true, false] {
            let (vault, _) = try Self.flakyVault([false, true], purpose: "wipe\(wipes)")
            let refresher = CountingRefresher.rotating()
            #expect(throws: LatchkeyError(.io, "")) {
                try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
            }
            #expect(FileManager.default.fileExists(atPath: try Self.pendingVault(of: vault)))
            let next = try Self.nextProcess(of: vault)
            if wipes { try next.wipe() } else { try next.deleteSession(named: "s", account: "alice") }
            let kept = PendingRotationVault(appID: vault.appID, directory: try #require(vault.storeDirectory))
            let remaining = try kept.store.vaultExists() ? try kept.store.list(kind: .session) : []
            #expect(remaining.isEmpty, "the kept answer was removed")
            #expect(try next.accessToken(named: "s", account: "alice", refresher: refresher.refresher) == nil)
            if wipes {
                #expect(
                    !FileManager.default.fileExists(atPath: try Self.pendingVault(of: vault)), "a wipe removes the file"
                )
            }
            let gone = try next.grant(named: "s", account: "alice") == nil
            #expect(refresher.calls == 1 && gone, "the session stays deleted")
        }
    }
}

/// A store whose session writes fail (`.io`) as scheduled; everything else passes through.
final class FlakySessionWrites: CredentialBackend {
    private let base: EncryptedFileBackend
    private let failures = Mutex<[Bool]>([])

    init(_ base: EncryptedFileBackend) { self.base = base }

    func schedule(_ plan: [Bool]) { failures.withLock { $0 = plan } }

    var kind: BackendKind { base.kind }
    func read(_ key: ItemKey) throws -> StoredItem? { try base.read(key) }
    func write(_ item: StoredItem, for key: ItemKey) throws {
        if key.kind == .session, failures.withLock({ $0.isEmpty ? false : $0.removeFirst() }) {
            throw LatchkeyError(.io, "the test store refused a write")
        }
        try base.write(item, for: key)
    }
    func delete(_ key: ItemKey) throws { try base.delete(key) }
    func list(kind: ItemKey.Kind?) throws -> [ItemKey] { try base.list(kind: kind) }
    func deleteAll() throws { try base.deleteAll() }
}
