import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Secret Service privacy", .sandboxed, .needsSecretService)
struct SecretServicePrivacyTests {
    static let account = "canary-account-4f1e@example.com"
    static let username = "canary-username-77d0"
    static let token = "canary-token-9b2c"

    /// Writes items whose account, username and token are canaries.
    static func writeCanaries(_ backend: SecretServiceBackend) throws {
        try backend.write(
            StoredItem(value: SecretBytes(utf8: token)), for: ItemKey(kind: .session, account: account, name: "access"))
        try backend.write(StoredItem(value: SecretBytes(utf8: username)), for: ItemKey(kind: .username, name: "last"))
        try backend.write(
            StoredItem(value: SecretBytes(utf8: token)),
            for: ItemKey(kind: .session, account: username, name: "refresh"))
    }

    static func leaks(_ text: String) -> [String] {
        [account, username, token].filter { text.localizedCaseInsensitiveContains($0) }
    }

    @Test("no attribute or label read through libsecret names an account, a username or a token")
    func attributesThroughLibSecret() async throws {
        try await SecretServiceTestSupport.withBackend("privacy") { backend in
            try Self.writeCanaries(backend)
            let items = try LibSecret.withConnection(deadline: .seconds(3)) { connection in
                try connection.search(
                    SecretServiceAttributes.schema, ["app": backend.appID.rawValue], loadSecrets: false)
            }
            #expect(items.count == 4, "three items and the pseudonym key")
            for item in items {
                #expect(Set(item.attributes.keys) == ["xdg:schema", "app", "kind", "account", "name"])
                for (name, value) in item.attributes {
                    #expect(Self.leaks(name + "=" + value).isEmpty, "attribute \(name) leaks")
                }
                #expect(Self.leaks(item.label).isEmpty, "label leaks")
                #expect(item.label.hasPrefix("Latchkey "))
            }
            let accounts = items.compactMap { $0.attributes["account"] }.filter { !$0.isEmpty }
            #expect(accounts.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) })
        }
    }

    @Test("secret-tool search --all shows no account, username or token outside the secrets")
    func attributesThroughSecretTool() async throws {
        try await SecretServiceTestSupport.withBackend("privacy-tool") { backend in
            try Self.writeCanaries(backend)
            let search = try runProgram("secret-tool", ["search", "--all", "app", backend.appID.rawValue])
            try #require(search.status == 0, "secret-tool failed: \(search.stderr)")
            // Each item prints as "[path]", "label = ", "secret = " (Latchkey's binary
            // envelope, which may span lines), "created = ", "modified = ", "schema = ",
            // "attribute.NAME = VALUE" lines. Everything but the secret is checked.
            var inSecret = false
            var checked = 0
            for line in (search.text + "\n" + search.stderr).split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("secret = ") {
                    inSecret = true
                    continue
                }
                if line.hasPrefix("created = ") { inSecret = false }
                if line.hasPrefix("[") { inSecret = false }
                guard !inSecret else { continue }
                #expect(Self.leaks(String(line)).isEmpty, "secret-tool shows: \(line)")
                if line.hasPrefix("attribute.") || line.hasPrefix("label = ") { checked += 1 }
            }
            #expect(checked == 4 * 5, "four items, each with a label and four attributes")
            #expect(search.text.contains("schema = io.github.latchkey.Item"))
        }
    }
}
