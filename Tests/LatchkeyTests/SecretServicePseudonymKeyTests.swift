import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Secret Service pseudonym key", .sandboxed, .needsSecretService)
struct SecretServicePseudonymKeyTests {
    static func keyItems(_ appID: AppID) throws -> [LibSecret.Item] {
        try LibSecret.withConnection(deadline: .seconds(3)) { connection in
            try connection.search(
                SecretServiceAttributes.schema, SecretServicePseudonymKey.attributes(appID), loadSecrets: true)
        }
    }

    @Test("concurrent first writes from two backends of one app make one key, and every item stays readable")
    func concurrentFirstUse() async throws {
        try await SecretServiceTestSupport.withBackend("firstuse") { first in
            let second = SecretServiceBackend(appID: first.appID)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, backend) in [first, second, first, second, first, second, first, second].enumerated() {
                    group.addTask {
                        try await SecretServiceTestSupport.onOwnThread {
                            try backend.write(
                                StoredItem(value: SecretBytes(utf8: "v\(index)")),
                                for: ItemKey(kind: .session, account: "user\(index)", name: "access"))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try Self.keyItems(first.appID).count == 1)
            for index in 0..<8 {
                #expect(
                    try second.read(ItemKey(kind: .session, account: "user\(index)", name: "access"))?.value
                        == SecretBytes(utf8: "v\(index)"))
            }
            #expect(try first.list(kind: .key).isEmpty, "the backend's own key is not listed")
        }
    }

    @Test("when two processes made a key, every reader takes the earliest")
    func earliestKeyWins() async throws {
        try await SecretServiceTestSupport.withBackend("twokeys") { backend in
            try backend.write(
                StoredItem(value: SecretBytes(utf8: "v")), for: ItemKey(kind: .session, account: "judy", name: "access")
            )
            let original = try #require(try Self.keyItems(backend.appID).first?.secret)
            let earlier = SecretServiceEnvelope(
                account: "", name: SecretServicePseudonymKey.itemName,
                item: StoredItem(value: .random(count: 32), created: Date(timeIntervalSinceReferenceDate: 0)))
            let later = SecretServiceEnvelope(
                account: "", name: SecretServicePseudonymKey.itemName,
                item: StoredItem(value: .random(count: 32), created: Date()))
            let chosen = try LibSecret.withConnection(deadline: .seconds(3)) { connection in
                let before = try SecretServicePseudonymKey.find(backend.appID, in: connection)
                for envelope in [later, earlier] {
                    try connection.store(
                        SecretServiceAttributes.schema, SecretServicePseudonymKey.attributes(backend.appID),
                        label: "forged", secret: envelope.encoded(), replace: false)
                }
                return (before, try SecretServicePseudonymKey.find(backend.appID, in: connection))
            }
            #expect(try Self.keyItems(backend.appID).count == 3)
            let account = "judy"
            let expected = SecretServicePseudonymKey(key: earlier.item.value).pseudonym(of: account)
            #expect(chosen.1?.pseudonym(of: account) == expected)
            #expect(
                chosen.0?.pseudonym(of: account)
                    == SecretServicePseudonymKey(key: try SecretServiceEnvelope(decoding: original).item.value)
                    .pseudonym(of: account))
            #expect(chosen.0?.pseudonym(of: account) != expected)
        }
    }
}
