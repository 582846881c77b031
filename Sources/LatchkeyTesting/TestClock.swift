import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A clock a test moves by hand, for a vault made by
/// `Vault.makeInMemory(appID:policy:store:clock:)`: every expiry
/// decision and audit entry of that vault reads this clock, so a test of
/// expiry moves it instead of sleeping.
public final class TestClock: Sendable {
    private let time: Mutex<Date>

    /// A clock that reads `start` until it is moved.
    /// - Parameter start: The first time it reads; 2026-01-01 00:00:00 UTC by default.
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        time = Mutex(start)
    }

    /// The time the clock reads now.
    public var now: Date { time.withLock { $0 } }

    /// Moves the clock on.
    /// - Parameter interval: How far, in seconds; a negative interval moves it back.
    public func advance(by interval: TimeInterval) {
        time.withLock { $0 += interval }
    }
}
