import Foundation
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

@testable import Latchkey

/// Counts a refresher's calls and answers them as told.
final class CountingRefresher: Sendable {
    private let state = Mutex<(calls: Int, used: [String])>((0, []))
    private let answer: @Sendable (Int) -> RefreshOutcome
    private let pause: Duration

    init(pause: Duration = .zero, answer: @escaping @Sendable (Int) -> RefreshOutcome) {
        self.pause = pause
        self.answer = answer
    }

    var calls: Int { state.withLock { $0.calls } }
    var usedTokens: [String] { state.withLock { $0.used } }

    var refresher: GrantRefresher {
        { token in
            let call = self.state.withLock { state in
                state.calls += 1
                state.used.append(token.utf8String() ?? "?")
                return state.calls
            }
            if self.pause > .zero { try? await Task.sleep(for: self.pause) }
            return self.answer(call)
        }
    }

    /// A refresher that rotates: call n returns access `a<n>` and refresh `r<n>`, valid for an hour.
    static func rotating(pause: Duration = .zero) -> CountingRefresher {
        CountingRefresher(pause: pause) { call in
            .refreshed(
                Grant(
                    accessToken: SecretBytes(utf8: "a\(call)"), accessTokenExpires: Date().addingTimeInterval(3600),
                    refreshToken: SecretBytes(utf8: "r\(call)"), refreshTokenExpires: Date().addingTimeInterval(86_400))
            )
        }
    }
}

/// Asks for session `s` of `alice`'s access token from every vault of `callers` at once
/// (one caller per element, so a vault may appear more than once), through `refresher`.
func accessTokensAtOnce(_ callers: [Vault], refresher: CountingRefresher) async throws -> [SecretBytes?] {
    try await withThrowingTaskGroup(of: SecretBytes?.self) { group in
        for vault in callers {
            group.addTask { try await vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher) }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}

/// A grant whose access token has expired and whose refresh token `r0` is good for a day.
func expiredGrant(access: String = "a0", refresh: String = "r0") -> Grant {
    Grant(
        accessToken: SecretBytes(utf8: access), accessTokenExpires: Date().addingTimeInterval(-1),
        refreshToken: SecretBytes(utf8: refresh), refreshTokenExpires: Date().addingTimeInterval(86_400),
        tokenType: "Bearer", scope: "read write")
}

extension TestedStore {
    /// A fresh vault on this store whose session `s` of `alice` holds ``expiredGrant(access:refresh:)``.
    func withExpiredGrant(purpose: String = #function) throws -> Vault {
        let vault = try open(purpose: purpose)
        try vault.saveGrant(expiredGrant(), name: "s", account: "alice")
        return vault
    }
}

@Suite("Grants", .sandboxed)
struct GrantTests {
    @Test(
        "a grant is one item holding both tokens, each expiry, the type and the scope", arguments: TestedStore.allCases)
    func oneItem(store: TestedStore) throws {
        let vault = try store.open()
        let hour = Date().addingTimeInterval(3600)
        let week = Date().addingTimeInterval(7 * 86_400)
        let grant = Grant(
            accessToken: SecretBytes(utf8: "access-1"), accessTokenExpires: hour,
            refreshToken: SecretBytes(utf8: "refresh-1"), refreshTokenExpires: week, tokenType: "DPoP",
            scope: "openid profile")
        try vault.saveGrant(grant, name: "login", account: "alice")
        #expect(try vault.storedKeys() == [ItemKey(kind: .session, account: "alice", name: "login")])
        let read = try #require(try store.reopen(vault).grant(named: "login", account: "alice"))
        #expect(read.accessToken == grant.accessToken && read.refreshToken == grant.refreshToken)
        #expect(abs(read.accessTokenExpires!.timeIntervalSince(hour)) < 0.001)
        #expect(abs(read.refreshTokenExpires!.timeIntervalSince(week)) < 0.001)
        #expect(read.tokenType == "DPoP" && read.scope == "openid profile")
        #expect(try vault.session(named: "login", account: "alice")?.value == SecretBytes(utf8: "access-1"))
    }

    @Test("a vault kept in memory refreshes once under its clock, with no directory and no sleep")
    func inMemoryUnderClock() async throws {
        let clock = TestClock()
        let vault = Vault.makeInMemory(appID: try AppID("org.example.grants-in-memory"), clock: clock)
        let grant = Grant(
            accessToken: SecretBytes(utf8: "a0"), accessTokenExpires: clock.now.addingTimeInterval(3600),
            refreshToken: SecretBytes(utf8: "r0"), refreshTokenExpires: clock.now.addingTimeInterval(86_400))
        try await vault.saveGrant(grant, name: "s", account: "alice")
        let refresher = CountingRefresher.rotating(pause: .milliseconds(50))
        #expect(
            try await vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
                == grant.accessToken)
        #expect(refresher.calls == 0, "an hour left by the vault's clock: no refresh is due")
        clock.advance(by: 3600)
        let tokens = try await accessTokensAtOnce(Array(repeating: vault, count: 6), refresher: refresher)
        #expect(refresher.calls == 1 && refresher.usedTokens == ["r0"])
        #expect(tokens.count == 6 && tokens.allSatisfy { $0 == SecretBytes(utf8: "a1") })
    }

    @Test("a plain session that begins with the grant marker is refused")
    func markerRefused() throws {
        let vault = try TestedStore.keyFile.open()
        let forged = SecretBytes(GrantRecord.marker + Array("x".utf8))
        #expect(throws: LatchkeyError(.invalidInput, "")) { try vault.saveSession(forged, name: "s", account: "") }
    }

    @Test("no refresh is due: the stored access token, and the refresher is never called")
    func noRefreshDue() throws {
        let vault = try TestedStore.keyFile.open()
        let valid = Grant(
            accessToken: SecretBytes(utf8: "a0"), accessTokenExpires: Date().addingTimeInterval(3600),
            refreshToken: SecretBytes(utf8: "r0"))
        try vault.saveGrant(valid, name: "s", account: "")
        let refresher = CountingRefresher.rotating()
        #expect(try vault.accessToken(named: "s", account: "", refresher: refresher.refresher) == valid.accessToken)
        #expect(refresher.calls == 0)
    }

    @Test("less than a tenth of the lifetime (at most 30 s) left is due; more is not")
    func refreshMargin() {
        let issued = Date()
        let tenMinutes = Grant(accessToken: SecretBytes(utf8: "a"), accessTokenExpires: issued.addingTimeInterval(600))
        #expect(!tenMinutes.isRefreshDue(at: issued.addingTimeInterval(569), issued: issued))
        #expect(tenMinutes.isRefreshDue(at: issued.addingTimeInterval(571), issued: issued), "30 s cap")
        let minute = Grant(accessToken: SecretBytes(utf8: "a"), accessTokenExpires: issued.addingTimeInterval(60))
        #expect(!minute.isRefreshDue(at: issued.addingTimeInterval(53), issued: issued))
        #expect(minute.isRefreshDue(at: issued.addingTimeInterval(55), issued: issued), "a tenth of 60 s")
    }

    @Test(
        "an expired access token is refreshed once, the rotated grant saved whole and audited",
        arguments: TestedStore.allCases)
    func refreshes(store: TestedStore) throws {
        let vault = try store.withExpiredGrant()
        let refresher = CountingRefresher.rotating()
        let token = try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        #expect(token == SecretBytes(utf8: "a1") && refresher.usedTokens == ["r0"])
        let saved = try #require(try store.reopen(vault).grant(named: "s", account: "alice"))
        #expect(saved.accessToken == SecretBytes(utf8: "a1") && saved.refreshToken == SecretBytes(utf8: "r1"))
        #expect(try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher) == token)
        #expect(refresher.calls == 1)
        let refreshes = try vault.auditEntries().filter { $0.event == .sessionRefreshed }
        #expect(refreshes.map(\.outcome) == [.ok])
    }

    @Test("a response without a refresh token keeps the old one")
    func keepsRefreshToken() throws {
        let vault = try TestedStore.keyFile.open()
        try vault.saveGrant(expiredGrant(), name: "s", account: "")
        let token = try vault.accessToken(named: "s", account: "") { _ in
            .refreshed(Grant(accessToken: SecretBytes(utf8: "a1"), accessTokenExpires: Date().addingTimeInterval(60)))
        }
        #expect(token == SecretBytes(utf8: "a1"))
        let saved = try #require(try vault.grant(named: "s", account: ""))
        #expect(saved.refreshToken == SecretBytes(utf8: "r0") && saved.scope == "read write")
    }

    @Test(
        "many callers at once on two vaults: one refresh, every caller gets the new token",
        arguments: TestedStore.allCases)
    func oneRefreshAcrossCallers(store: TestedStore) async throws {
        let first = try store.open()
        let second = try store.reopen(first)
        try await first.saveGrant(expiredGrant(), name: "s", account: "alice")
        let refresher = CountingRefresher.rotating(pause: .milliseconds(200))
        let tokens = try await accessTokensAtOnce(
            Array(repeating: [first, second], count: 4).flatMap { $0 }, refresher: refresher)
        #expect(refresher.calls == 1 && refresher.usedTokens == ["r0"])
        #expect(tokens.count == 8 && tokens.allSatisfy { $0 == SecretBytes(utf8: "a1") })
    }

    @Test("a rejected refresh ends the session as the policy says, and is audited", arguments: TestedStore.allCases)
    func rejection(store: TestedStore) throws {
        let vault = try store.open()
        try vault.rememberUsername("alice")
        try vault.saveGrant(expiredGrant(), name: "s", account: "alice")
        try vault.saveSession(SecretBytes(utf8: "other"), name: "other", account: "alice")
        try vault.saveSession(SecretBytes(utf8: "bob's"), name: "other", account: "bob")
        let refresher = CountingRefresher { _ in .rejected(reason: "invalid_grant") }
        #expect(throws: LatchkeyError(.refreshRejected, "")) {
            try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        }
        // The default policy wipes the account's sessions on logout and keeps the username.
        #expect(try vault.sessions().map(\.account) == ["bob"])
        #expect(try vault.lastUsername() == "alice")
        let entry = try #require(try vault.auditEntries().last { $0.event == .sessionRefreshed })
        #expect(entry.outcome == .failed(.refreshRejected) && entry.detail == "s")
        // A second caller finds no session, and never calls the refresher.
        #expect(try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher) == nil)
        #expect(refresher.calls == 1)
    }

    @Test(
        "an unavailable endpoint keeps the grant untouched, reports it, and the next call tries again",
        arguments: TestedStore.allCases)
    func unavailable(store: TestedStore) throws {
        let vault = try store.withExpiredGrant()
        let down = CountingRefresher { _ in .unavailable(reason: "connection refused") }
        #expect(throws: LatchkeyError(.refreshUnavailable, "")) {
            try vault.accessToken(named: "s", account: "alice", refresher: down.refresher)
        }
        let kept = try #require(try vault.grant(named: "s", account: "alice"))
        #expect(kept.refreshToken == SecretBytes(utf8: "r0") && kept.accessToken == SecretBytes(utf8: "a0"))
        let entry = try #require(try vault.auditEntries().last { $0.event == .sessionRefreshed })
        #expect(entry.outcome == .failed(.refreshUnavailable))
        let up = CountingRefresher.rotating()
        #expect(try vault.accessToken(named: "s", account: "alice", refresher: up.refresher) == SecretBytes(utf8: "a1"))
        #expect(up.usedTokens == ["r0"])
    }

    @Test("a refresh that lost a race never overwrites or deletes a newer grant", arguments: TestedStore.allCases)
    func loserKeepsNewerGrant(store: TestedStore) throws {
        let vault = try store.withExpiredGrant()
        let key = ItemKey(kind: .session, account: "alice", name: "s")
        let newer = Grant(
            accessToken: SecretBytes(utf8: "newer"), accessTokenExpires: Date().addingTimeInterval(3600),
            refreshToken: SecretBytes(utf8: "newer-refresh"))
        // A writer that does not wait for the refresh lock replaces the grant while the refresh runs.
        let backend = vault.backend
        let sneak: @Sendable () -> Void = {
            try? backend.write(
                StoredItem(value: GrantRecord.encode(newer), expires: Date().addingTimeInterval(86_400)), for: key)
        }
        for answer in [RefreshOutcome.rejected(reason: "invalid_grant"), .refreshed(expiredGrant(access: "stale"))] {
            try vault.saveGrant(expiredGrant(), name: "s", account: "alice")
            let loser = CountingRefresher { _ in
                sneak()
                return answer
            }
            _ = try? vault.accessToken(named: "s", account: "alice", refresher: loser.refresher)
            let kept = try #require(try vault.grant(named: "s", account: "alice"))
            #expect(kept.accessToken == newer.accessToken && kept.refreshToken == newer.refreshToken)
        }
    }

    @Test("saving a grant waits for a refresh in progress, so the refresh cannot overwrite it")
    func saveWaitsForRefresh() async throws {
        let vault = try TestedStore.keyFile.open()
        try await vault.saveGrant(expiredGrant(), name: "s", account: "")
        let refresher = CountingRefresher.rotating(pause: .milliseconds(500))
        async let refreshed = vault.accessToken(named: "s", account: "", refresher: refresher.refresher)
        while refresher.calls == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let login = Grant(accessToken: SecretBytes(utf8: "login"), refreshToken: SecretBytes(utf8: "login-r"))
        try await vault.saveGrant(login, name: "s", account: "")
        _ = try await refreshed
        #expect(try await vault.grant(named: "s", account: "")?.accessToken == SecretBytes(utf8: "login"))
    }
}
