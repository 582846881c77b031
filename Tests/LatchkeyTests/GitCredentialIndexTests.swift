import Foundation
import Latchkey
import Testing

@testable import LatchkeyCredentialHelpers

@Suite("git credential index", .sandboxed)
struct GitCredentialIndexTests {
    /// The index as Latchkey 0.2 stored it: Foundation's `JSONEncoder` over the synthesized `Codable`.
    struct StoredBefore: Codable {
        struct Entry: Codable {
            var username: String
            var path: String?
            var expiry: Int64?
            var hasRefreshToken: Bool
        }
        var version = 1
        var entries: [Entry]
    }

    let entries = [
        GitCredentialIndex.Entry(username: "bob", path: "team/repo.git", expiry: 1_750_000_000, hasRefreshToken: true),
        GitCredentialIndex.Entry(username: "", path: nil, expiry: nil, hasRefreshToken: false),
        GitCredentialIndex.Entry(username: "zoë \"q\" \\ \u{1}", path: "a b", expiry: -1, hasRefreshToken: false),
    ]

    @Test("an index stored by JSONEncoder (escaped slashes, absent keys left out) reads the same")
    func readsWhatWasStoredBefore() throws {
        let before = StoredBefore(
            entries: entries.map {
                .init(username: $0.username, path: $0.path, expiry: $0.expiry, hasRefreshToken: $0.hasRefreshToken)
            })
        let stored = try JSONEncoder().encode(before)
        #expect(String(decoding: stored, as: UTF8.self).contains(#"team\/repo.git"#))
        #expect(GitCredentialIndex.decode(SecretBytes(stored)) == GitCredentialIndex(entries: entries))
    }

    @Test("an index round-trips, and what it writes Foundation's JSONDecoder reads too")
    func roundTrip() throws {
        let index = GitCredentialIndex(entries: entries)
        let encoded = index.encoded()
        #expect(GitCredentialIndex.decode(encoded) == index)
        let read = try encoded.withUnsafeBytes { try JSONDecoder().decode(StoredBefore.self, from: Data($0)) }
        #expect(
            read.entries.map(\.username) == entries.map(\.username) && read.entries.map(\.path) == entries.map(\.path))
        #expect(GitCredentialIndex.decode(GitCredentialIndex().encoded()) == GitCredentialIndex())
    }

    @Test(
        "anything else reads as no index (it is then rebuilt)",
        arguments: [
            #"{"version":2,"entries":[]}"#, #"{"entries":[]}"#, #"{"version":1}"#, #"{"version":1,"entries":{}}"#,
            #"{"version":1,"entries":[{"username":"a"}]}"#,
            #"{"version":1,"entries":[{"username":1,"hasRefreshToken":true}]}"#,
            #"{"version":1,"entries":[{"username":"a","hasRefreshToken":true,"expiry":1.5}]}"#,
            #"{"version":1,"entries":[{"username":"a","hasRefreshToken":true,"path":7}]}"#, "[]", "not json", "",
        ])
    func rejects(text: String) {
        #expect(GitCredentialIndex.decode(SecretBytes(utf8: text)) == nil)
    }
}
