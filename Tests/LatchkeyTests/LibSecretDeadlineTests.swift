import Synchronization
import Testing

@testable import Latchkey

@Suite("A libsecret call that never returns after its deadline", .sandboxed)
struct LibSecretDeadlineTests {
    /// Counts one cancellation's reports.
    final class Reports: Sendable {
        let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }

    /// Waits (blocking this thread, up to 30 s: timers run late on a busy machine) until `condition` holds.
    private func wait(until condition: () -> Bool) {
        let start = ContinuousClock.now
        while !condition() && ContinuousClock.now - start < .seconds(30) { POSIX.sleep(.milliseconds(10)) }
    }

    @Test("a call still running a grace after its deadline is reported, once")
    func reportedOnce() throws {
        try LibSecret.load()
        let reports = Reports()
        let stuck = try LibSecret.Cancellation(
            after: .milliseconds(20), grace: .milliseconds(50), neverReturning: reports.add)
        wait { reports.value > 0 }
        #expect(stuck.isCancelled)
        #expect(reports.value == 1)
        POSIX.sleep(.milliseconds(300))
        #expect(reports.value == 1)
        withExtendedLifetime(stuck) {}
    }

    @Test("a call that returns after its deadline is cancelled and not reported")
    func returnedInTime() throws {
        try LibSecret.load()
        let reports = Reports()
        do {
            let returned = try LibSecret.Cancellation(
                after: .milliseconds(20), grace: .seconds(1), neverReturning: reports.add)
            wait { returned.isCancelled }
            #expect(returned.isCancelled)
        }
        POSIX.sleep(.milliseconds(1500))
        #expect(reports.value == 0)
    }
}
