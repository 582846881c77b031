import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@testable import Latchkey

/// Issue 34 case 4: a process killed while it makes a namespace's trail (its key in the store,
/// its anchor beside it) must leave a namespace the next process continues, never one that reads
/// as tampered.
@Suite("Audit trail creation is crash-atomic", .sandboxed, .needsTestSeams)
struct AuditCreationCrashTests {
    /// A crash after one step of the making.
    struct Crash: Error {}

    enum Store: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case memory, secretService
        var testDescription: String { rawValue }

        func backend(_ appID: AppID) throws -> any CredentialBackend {
            switch self {
            case .memory: return InMemoryBackend()
            case .secretService:
                try SecretServiceGate.require()
                return SecretServiceBackend(appID: appID)
            }
        }
    }

    @Test(
        "a crash after any step of a trail's making leaves an empty, intact trail that the next process continues",
        arguments: Store.allCases, 1...3)
    func crashDuringMaking(store: Store, step: Int) throws {
        #if LATCHKEY_TEST_SEAMS
            let appID = try SecretServiceTestSupport.freshAppID("creationcrash")
            let backend = try store.backend(appID)
            defer { _ = try? backend.deleteAll() }
            let directory = try freshDirectory() + "/store"
            let dying = AuditTrail(appID: appID, directory: directory, backend: backend)
            do {
                let crashAtStep: @Sendable (Int) throws -> Void = { if $0 == step { throw Crash() } }
                try AuditTrail.$creationStepObserver.withValue(crashAtStep) {
                    try dying.record(.sessionSaved, outcome: .ok, backend: backend.kind, detail: "first")
                }
                Issue.record("the making has no step \(step)")
                return
            } catch is Crash {}
            let next = AuditTrail(appID: appID, directory: directory, backend: backend)
            #expect(try next.verify() == .intact(entryCount: 0, lastSequence: 0), "a crash read as tampering")
            try next.record(.sessionSaved, outcome: .ok, backend: backend.kind, detail: "again")
            let third = AuditTrail(appID: appID, directory: directory, backend: backend)
            try third.record(.sessionRead, outcome: .ok, backend: backend.kind)
            #expect(try third.verify() == .intact(entryCount: 2, lastSequence: 2))
            #expect(try third.entries().map(\.detail) == ["again", nil])
        #endif
    }
}
