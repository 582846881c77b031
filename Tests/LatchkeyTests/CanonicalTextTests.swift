import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("One spelling per account and name", .sandboxed)
struct CanonicalTextTests {
    static let composed = "jos\u{E9}"
    static let decomposed = "jose\u{301}"

    @Test(
        "NFC and NFD spellings of an account and a name are one item in every store, one pseudonym, one logout",
        arguments: TestedStore.allCases)
    func oneSpelling(store: TestedStore) throws {
        let vault = try store.open()
        _ = try vault.saveSession(SecretBytes(utf8: "first"), name: "caf\u{E9}", account: Self.composed)
        _ = try vault.saveSession(SecretBytes(utf8: "second"), name: "cafe\u{301}", account: Self.decomposed)
        _ = try vault.saveSession(SecretBytes(utf8: "kept"), name: "access", account: "other")
        let keys = try vault.storedKeys([.session])
        #expect(keys.count == 2, "\(keys)")
        let mine = keys.filter { $0.account != "other" }
        #expect(mine.map { Array($0.account.utf8) } == [Array(Self.composed.utf8)], "stored in NFC")
        #expect(mine.map { Array($0.name.utf8) } == [Array("caf\u{E9}".utf8)])
        #expect(try vault.session(named: "caf\u{E9}", account: Self.composed)?.value == SecretBytes(utf8: "second"))

        let saved = try vault.auditEntries().filter { $0.event == .sessionSaved }.compactMap(\.account)
        #expect(saved.count == 3 && Set(saved).count == 2, "one pseudonym per account, whatever its spelling: \(saved)")

        _ = try vault.logout(account: Self.decomposed)
        #expect(try vault.storedKeys([.session]).map(\.account) == ["other"])
    }

    @Test("the rule itself: NFC, and ASCII untouched")
    func rule() {
        #expect(Array(CanonicalText.nfc(Self.decomposed).utf8) == Array(Self.composed.utf8))
        #expect(Array(CanonicalText.nfc("A\u{30A}").utf8) == Array("\u{C5}".utf8))
        #expect(CanonicalText.nfc("plain-ascii") == "plain-ascii")
        #expect(
            Array(ItemKey(kind: .session, account: Self.decomposed, name: "n").account.utf8)
                == Array(Self.composed.utf8))
    }

    @Test("bytes that are not UTF-8 are refused as an app id, an account or a name, never mapped to U+FFFD")
    func notUTF8() throws {
        #expect(try AppID(utf8: Array("com.example.notes".utf8)).rawValue == "com.example.notes")
        let app = #expect(throws: LatchkeyError.self) { try AppID(utf8: [0x6E, 0xFF]) }
        #expect(app?.code == .invalidInput && app?.message.contains("not valid UTF-8") == true)
        let key = try ItemKey(kind: .session, account: Array("e\u{301}".utf8), name: Array("n".utf8))
        #expect(key == ItemKey(kind: .session, account: "\u{E9}", name: "n"), "normalised as ever")
        for (account, name) in [([UInt8](), [0x6E, 0xFF]), ([0x6E, 0xFE], Array("n".utf8))] {
            let error = #expect(throws: LatchkeyError.self) {
                try ItemKey(kind: .session, account: account, name: name)
            }
            #expect(error?.code == .invalidInput && error?.message.contains("not valid UTF-8") == true)
        }
    }
}
