import Foundation
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

@testable import Latchkey

/// A logout, a session deletion or a wipe that lands while a refresh is in flight
/// (docs/ROTATION.md, "Logging out during a refresh"): whatever the refresh does
/// after it, no session the deletion removed comes back.
@Suite("Grants against a logout", .sandboxed)
struct GrantLogoutTests {
    /// How the session ends.
    enum Ending: String, CaseIterable, Sendable {
        case logout, deleteSession, wipe

        func run(_ vault: Vault) throws {
            switch self {
            case .logout: try vault.logout(account: "alice")
            case .deleteSession: try vault.deleteSession(named: "s", account: "alice")
            case .wipe: try vault.wipe()
            }
        }
    }

    /// The store, the ending, and whether the namespace is audited (an audited
    /// operation holds the trail's lock, which other audited operations wait for).
    struct Race: CustomTestStringConvertible, Sendable {
        let store: TestedStore?
        let ending: Ending
        let audited: Bool
        var testDescription: String {
            "\(store?.rawValue ?? "in memory"), \(ending.rawValue), \(audited ? "audited" : "audit disabled")"
        }
    }

    static let races: [Race] =
        ([TestedStore.secretService, .keyFile, .passphrase] as [TestedStore?] + [nil]).flatMap { store in
            Ending.allCases.map { Race(store: store, ending: $0, audited: false) }
                + [Race(store: store, ending: .logout, audited: true)]
        }

    static let unaudited: Policy = {
        let document = #"{"version": 1, "name": "unaudited", "audit": {"enabled": false}}"#
        return try! Policy(jsonData: Array(document.utf8), source: "test:unaudited")
    }()

    @Test(
        "a session ended after the refresh read it again, before it saved, stays ended in every vault",
        .needsTestSeams, arguments: races)
    func endedBeforeTheSave(race: Race) throws {
        #if LATCHKEY_TEST_SEAMS
            let policy = race.audited ? Policy.default : Self.unaudited
            let vault: Vault
            let other: Vault
            if let store = race.store {
                vault = try store.open(policy: policy)
                other = try store.reopen(vault, policy: policy)
            } else {
                vault = Vault.makeInMemory(appID: try AppID("org.example.grant-logout"), policy: policy)
                other = vault
            }
            try vault.saveGrant(expiredGrant(), name: "s", account: "alice")
            let ending = DispatchGroup()
            let failure = Mutex<String?>(nil)
            let end = race.ending
            // In the window between the refresh's second read and its save, another caller (another
            // vault of the namespace, as another process would be) ends the session. The refresh
            // waits a moment for it, as a slow save would, but not for ever: a fixed vault makes the
            // ending wait for the save instead.
            let endInTheWindow: @Sendable () -> Void = {
                ending.enter()
                Thread.detachNewThread {
                    do { try end.run(other) } catch { failure.withLock { $0 = "\(error)" } }
                    ending.leave()
                }
                _ = ending.wait(timeout: .now() + 0.5)
            }
            let refresher = CountingRefresher.rotating()
            _ = try Vault.$conditionalWriteObserver.withValue(endInTheWindow) {
                try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
            }
            #expect(ending.wait(timeout: .now() + 60) == .success, "the ending never finished")
            #expect(failure.withLock { $0 } == nil)
            #expect(refresher.calls == 1)
            #expect(try other.grant(named: "s", account: "alice") == nil, "the ended session came back")
            #expect(try vault.grant(named: "s", account: "alice") == nil, "the ended session came back")
            if let store = race.store {
                #expect(
                    try store.reopen(vault).grant(named: "s", account: "alice") == nil, "the ended session came back")
            }
        #endif
    }

    @Test(
        "a refresher that ends the session itself does not wait for a lock its own refresh holds",
        arguments: [TestedStore.secretService, .keyFile], Ending.allCases)
    func refresherEndsTheSession(store: TestedStore, ending: Ending) throws {
        let vault = try store.withExpiredGrant()
        let failure = Mutex<String?>(nil)
        let refresher = CountingRefresher { call in
            do { try ending.run(vault) } catch { failure.withLock { $0 = "\(error)" } }
            return .refreshed(expiredGrant(access: "a\(call)", refresh: "r\(call)"))
        }
        let token = try vault.accessToken(named: "s", account: "alice", refresher: refresher.refresher)
        #expect(failure.withLock { $0 } == nil)
        #expect(token == nil && refresher.calls == 1)
        #expect(try store.reopen(vault).grant(named: "s", account: "alice") == nil, "the ended session came back")
    }
}
