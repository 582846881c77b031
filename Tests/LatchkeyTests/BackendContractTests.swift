import Foundation
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

@testable import Latchkey

/// The four stores Latchkey ships or tests with, each opened for the backend contract.
enum ContractStore: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, keyFile, passphrase, secretService
    var testDescription: String { rawValue }

    /// The contract, opening this store's namespaces in a directory of the test's own.
    func contract(purpose: String = #function) throws -> CredentialBackendContract {
        let directory = try freshDirectory(purpose) + "/store"
        switch self {
        case .memory:
            let stores = Mutex<[AppID: InMemoryBackend]>([:])
            return CredentialBackendContract { appID in
                stores.withLock { stores in
                    if let store = stores[appID] { return store }
                    let store = InMemoryBackend()
                    stores[appID] = store
                    return store
                }
            }
        case .keyFile:
            return CredentialBackendContract {
                EncryptedFileBackend(appID: $0, directory: directory, keySource: .keyFile)
            }
        case .passphrase:
            return CredentialBackendContract {
                EncryptedFileBackend(appID: $0, directory: directory, keySource: fastPassphrase())
            }
        case .secretService:
            try SecretServiceGate.require()
            // A Secret Service that crashes mid-call (KeePassXC did, under make interop-keepassxc)
            // can leave libsecret waiting past its deadline: end the run, saying so, not hang it.
            SecretServiceBackend.whenACallNeverReturns {
                FileHandle.standardError.write(
                    Data(
                        "BackendContractTests: a Secret Service call never returned after its deadline; ending the run\n"
                            .utf8))
                POSIX.exitImmediately(75)
            }
            return CredentialBackendContract { SecretServiceBackend(appID: $0) }
        }
    }
}

@Suite("The CredentialBackend contract, in every store", .sandboxed)
struct BackendContractTests {
    @Test("every store keeps every rule", arguments: ContractStore.allCases, CredentialBackendContract.Rule.allCases)
    func rule(store: ContractStore, rule: CredentialBackendContract.Rule) throws {
        try store.contract().check(rule)
    }

    @Test("a broken store is caught, with the rule it broke")
    func brokenStoreIsCaught() throws {
        /// Forgets the expiry it is given, and every instance is a new, empty store.
        final class ForgetfulStore: CredentialBackend {
            let inner = InMemoryBackend()
            var kind: BackendKind { .memory }
            func read(_ key: ItemKey) throws -> StoredItem? { try inner.read(key) }
            func write(_ item: StoredItem, for key: ItemKey) throws {
                try inner.write(StoredItem(value: item.value, created: item.created), for: key)
            }
            func delete(_ key: ItemKey) throws { try inner.delete(key) }
            func list(kind: ItemKey.Kind?) throws -> [ItemKey] { try inner.list(kind: kind) }
            func deleteAll() throws { try inner.deleteAll() }
        }
        let violations = CredentialBackendContract { _ in ForgetfulStore() }.violations()
        #expect(Set(violations.map(\.rule)) == [.readsBackWhatWasWritten, .writesAreVisibleToANewInstance])
        #expect(violations.first { $0.rule == .readsBackWhatWasWritten }?.description.contains("expiry") == true)
    }
}
