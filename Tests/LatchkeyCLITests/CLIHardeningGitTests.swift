import Foundation
import LatchkeyTestSupport
import Testing

/// git input that must not widen a lookup or expire a credential (issue 14, item 11).
@Suite("git-credential-latchkey refuses what git's own helpers refuse", .sandboxed)
struct CLIHardeningGitTests {
    @Test("get with a url that cannot be parsed returns nothing and fails; password_expiry_utc=0 keeps the password")
    func urlAndZeroExpiry() throws {
        let store = try Store("file")
        let stored = "protocol=https\nhost=one.example\nusername=alice\npassword=pw-one\npassword_expiry_utc=0\n\n"
        let put = try store.run(["git-credential", "store"], input: stored)
        #expect(put.status == 0, "\(put.stderr)")
        let found = try store.run(["git-credential", "get"], input: "protocol=https\nhost=one.example\n\n")
        #expect(
            found.text.contains("password=pw-one"),
            "a password stored with expiry 0 must not be expired: \(found.stderr)")
        // No expiry given, none answered: the policy's cap applies inside Latchkey, never reported as git's own.
        #expect(!found.text.contains("password_expiry_utc"), "\(found.text)")

        let refused = try store.run(["git-credential", "get"], input: "url=two.example/repo\n\n")
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(!refused.text.contains("pw-one"))
        #expect(!refused.stderr.contains("two.example"))
    }
}
