import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// What the Secret Service tests share: fresh app namespaces, real processes,
/// and timing of errors.
enum SecretServiceTestSupport {
    /// A new app id nobody else uses, so tests running in parallel never meet.
    static func freshAppID(_ purpose: String) throws -> AppID {
        try AppID("io.github.latchkey.test.\(purpose).\(UInt64.random(in: 0...UInt64.max))")
    }

    /// Runs `body` with a backend for a namespace of its own, then empties the namespace.
    static func withBackend<Result>(
        _ purpose: String, deadline: Duration = .seconds(3),
        _ body: (SecretServiceBackend) async throws -> Result
    ) async throws -> Result {
        try SecretServiceGate.require()
        let backend = SecretServiceBackend(appID: try freshAppID(purpose), deadline: deadline)
        do {
            let result = try await body(backend)
            try await onOwnThread { try backend.deleteAll() }
            return result
        } catch {
            do { try await onOwnThread { try backend.deleteAll() } } catch let cleanup {
                Issue.record("cleaning up failed: \(cleanup)")
            }
            throw error
        }
    }

    /// Runs blocking work on a new thread, leaving the test runner's threads free.
    static func onOwnThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try work() }) }.start()
        }
    }

    /// The output and status of a finished process.
    /// Runs `body`, expects it to throw a `LatchkeyError`, and returns the error
    /// and how long it took.
    static func failure(_ body: () throws -> Void) -> (error: LatchkeyError?, elapsed: Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            try body()
            return (nil, clock.now - start)
        } catch let error as LatchkeyError {
            return (error, clock.now - start)
        } catch {
            Issue.record("unexpected error type: \(error)")
            return (nil, clock.now - start)
        }
    }
}
