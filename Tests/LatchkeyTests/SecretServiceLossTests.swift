import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// Items the provider lost (kept with an empty secret, as KWallet 5.103 does when
/// stopped before it saved them) never brick a namespace (issue 27).
@Suite("Secret Service items the provider lost", .sandboxed, .needsSecretService)
struct SecretServiceLossTests {
    @Test("a session whose value was lost reads as absent, is not listed, is reported as damaged and can be deleted")
    func lostSession() async throws {
        try await SecretServiceTestSupport.withBackend("lostsession") { backend in
            try await SecretServiceTestSupport.onOwnThread {
                let lost = ItemKey(kind: .session, account: "alice", name: "access")
                let kept = ItemKey(kind: .session, account: "alice", name: "refresh")
                try backend.write(StoredItem(value: SecretBytes(utf8: "one")), for: lost)
                try backend.write(StoredItem(value: SecretBytes(utf8: "two")), for: kept)
                #expect(try loseValues(app: backend.appID.rawValue, ["kind": "session", "name": "access"]) == 1)

                #expect(try backend.read(lost) == nil)
                #expect(try backend.read(kept)?.value == SecretBytes(utf8: "two"))
                #expect(try backend.list(kind: .session) == [kept])
                #expect(try backend.list(kind: nil).contains(kept))
                #expect(try backend.damagedItems().map(\.name) == ["access"])
                #expect(try backend.deleteDamaged(kind: .session, account: "bob") == 0)
                #expect(try backend.deleteDamaged(kind: .session, account: "alice") == 1)
                #expect(try backend.damagedItems().isEmpty)
                #expect(try backend.read(kept)?.value == SecretBytes(utf8: "two"))
            }
        }
    }

    @Test(
        "a lost pseudonym key of a brand-new namespace is made again; with items stored under it, writes stop with 65 naming wipe"
    )
    func lostPseudonymKey() async throws {
        try await SecretServiceTestSupport.withBackend("lostkey") { backend in
            try await SecretServiceTestSupport.onOwnThread {
                let app = backend.appID.rawValue
                let key = ItemKey(kind: .key, account: "", name: "audit")
                try backend.write(StoredItem(value: SecretBytes(utf8: "audit-key")), for: key)
                try loseValues(app: app, ["kind": "key", "name": "pseudonym"])
                // Only key items: nothing was stored under the lost key, so a new one is made.
                let fresh = SecretServiceBackend(appID: backend.appID)
                let session = ItemKey(kind: .session, account: "alice", name: "access")
                try fresh.write(StoredItem(value: SecretBytes(utf8: "tok")), for: session)
                #expect(try fresh.read(session)?.value == SecretBytes(utf8: "tok"))
                #expect(try fresh.read(key)?.value == SecretBytes(utf8: "audit-key"))

                try loseValues(app: app, ["kind": "key", "name": "pseudonym"])
                let later = SecretServiceBackend(appID: backend.appID)
                let (error, _) = SecretServiceTestSupport.failure {
                    try later.write(StoredItem(value: SecretBytes(utf8: "x")), for: session)
                }
                #expect(error?.code == .tampered)
                #expect(error?.message.contains("wipe") == true)
                // The way out: the damaged key goes, and the session stored under it is still found by its payload.
                #expect(try later.list(kind: .session) == [session])
                #expect(try later.deleteDamaged() == 1)
                try later.delete(session)
                #expect(try later.list(kind: .session).isEmpty)
                try later.write(StoredItem(value: SecretBytes(utf8: "new")), for: session)
                #expect(try later.read(session)?.value == SecretBytes(utf8: "new"))
            }
        }
    }

    @Test("a namespace whose every item lost its value (KWallet killed before its first save) gets a new pseudonym key")
    func everythingLost() async throws {
        try await SecretServiceTestSupport.withBackend("alllost") { backend in
            try await SecretServiceTestSupport.onOwnThread {
                let session = ItemKey(kind: .session, account: "alice", name: "access")
                try backend.write(StoredItem(value: SecretBytes(utf8: "tok")), for: session)
                let app = backend.appID.rawValue
                #expect(try loseValues(app: app, ["kind": "session"]) == 1)
                #expect(try loseValues(app: app, ["kind": "key", "name": "pseudonym"]) == 1)
                let later = SecretServiceBackend(appID: backend.appID)
                try later.write(StoredItem(value: SecretBytes(utf8: "new")), for: session)
                #expect(try later.read(session)?.value == SecretBytes(utf8: "new"))
                #expect(try later.list(kind: .session) == [session])
            }
        }
    }
}
