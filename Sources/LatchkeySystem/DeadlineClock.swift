import Latchkey

extension POSIX {
    /// The time a tool's deadlines are measured in and waited on: the continuous clock, or a
    /// test's manual one, which moves only when the test moves it. A wait for a socket
    /// (``LocalSocket``) lasts at most ``longestWait`` before it reads the time again, so a
    /// deadline of a manual clock passes within that much real time of the test moving it.
    package struct DeadlineClock: Sendable {
        /// The current instant.
        package let now: @Sendable () -> ContinuousClock.Instant
        /// Waits for the duration, in this clock's time.
        package let sleep: @Sendable (Duration) -> Void
        /// The longest one wait lasts before the time is read again.
        package let longestWait: Duration

        /// A clock of these parts.
        package init(
            now: @escaping @Sendable () -> ContinuousClock.Instant, sleep: @escaping @Sendable (Duration) -> Void,
            longestWait: Duration
        ) {
            self.now = now
            self.sleep = sleep
            self.longestWait = longestWait
        }

        /// The continuous clock (`CLOCK_MONOTONIC`, which keeps counting while the machine sleeps).
        package static let continuous = DeadlineClock(
            now: { ContinuousClock.now }, sleep: { POSIX.sleep($0) }, longestWait: .seconds(60))
    }
}
