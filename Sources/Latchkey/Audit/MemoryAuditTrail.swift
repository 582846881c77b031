import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The audit trail of a vault kept in memory (`LatchkeyTesting`'s test vault):
/// the same JSON Lines, chained by the same keyed MAC and checked by the same
/// ``AuditChain`` as a trail file, with its key and anchor in memory, so a test
/// verifies it with `Vault.verifyAudit()` and no directory is needed. Nothing
/// outlives the instance; its retention is unbounded and nothing can break it
/// from outside, so ``reset()`` always finds it intact.
package final class MemoryAuditTrail: AuditLog {
    private struct State {
        var bytes: [UInt8] = []
        var lastSequence: UInt64 = 0
        var previous = AuditEntry.genesisMAC
        var anchor = AuditAnchor.genesis
    }

    /// The app namespace, bound into every MAC.
    let appID: AppID
    /// The kind of store the vault uses, for messages.
    let storeKind: BackendKind
    /// The clock entries are stamped with.
    let clock: @Sendable () -> Date
    private let key = SecretBytes.random(count: Sodium.genericHashKeyLength)
    private let state = Mutex(State())

    /// An empty trail of `appID`.
    package init(appID: AppID, storeKind: BackendKind, clock: @escaping @Sendable () -> Date) {
        self.appID = appID
        self.storeKind = storeKind
        self.clock = clock
    }

    package var path: String { "memory:\(appID).d/audit.\(storeKind.rawValue).jsonl" }

    package func appending<Result>(_ body: (any AuditAppender) throws -> Result) throws -> Result {
        try state.withLock { state in
            let appender = Appender(trail: self, state: state)
            defer { state = appender.state }
            return try body(appender)
        }
    }

    package func verify() throws -> AuditVerification {
        let (bytes, anchor) = state.withLock { ($0.bytes, $0.anchor) }
        return AuditChain(appID: appID, path: path, key: key, keyStore: storeKind).check(bytes, anchor: anchor).0
    }

    package func entries(since sequence: UInt64?) throws -> [AuditEntry] {
        let bytes = state.withLock { $0.bytes }
        return try bytes.split(separator: 10).enumerated().map { index, line in
            try AuditEntry(line: line, source: "\(path) line \(index + 1)")
        }.filter { entry in sequence.map { entry.sequence > $0 } ?? true }
    }

    package func resets() throws -> [AuditEntry] {
        try entries(since: nil).filter { $0.event == .auditReset }
    }

    package func reset() throws -> AuditResetReport? { nil }

    private final class Appender: AuditAppender {
        let trail: MemoryAuditTrail
        var state: State

        init(trail: MemoryAuditTrail, state: State) {
            self.trail = trail
            self.state = state
        }

        func append(
            _ event: AuditEvent, outcome: AuditOutcome, backend: BackendKind, account: String?, detail: String?
        ) throws -> AuditEntry {
            let entry = try AuditEntry.chained(
                event, outcome: outcome, backend: backend, account: account, detail: detail,
                after: (state.lastSequence, state.previous), at: trail.clock(), key: trail.key, appID: trail.appID)
            state.bytes += Array((entry.jsonLine + "\n").utf8)
            state.lastSequence = entry.sequence
            state.previous = entry.chainValue
            state.anchor = AuditAnchor(sequence: entry.sequence, mac: entry.chainValue)
            return entry
        }
    }
}
