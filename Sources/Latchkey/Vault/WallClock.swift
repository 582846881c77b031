#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one place a vault reads the time from: every expiry decision (the
/// expiry a save stores, whether a read, a listing or the active account finds
/// an item expired) and every audit entry's time. The system clock unless the
/// vault was made with another, as `LatchkeyTesting`'s test vault does, so
/// expiry is tested by moving a clock rather than by sleeping.
package struct WallClock: Sendable {
    /// The current time by this clock.
    package let now: @Sendable () -> Date

    /// A clock that reads `now`.
    /// - Parameter now: Returns the current time.
    package init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system's clock.
    package static let system = WallClock { Date() }
}
