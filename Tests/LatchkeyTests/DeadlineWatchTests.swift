import Synchronization
import Testing

@testable import Latchkey

@Suite("The deadline watch", .sandboxed)
struct DeadlineWatchTests {
    /// What the actions did, in order.
    final class Log: Sendable {
        let events = Mutex<[String]>([])
        var all: [String] { events.withLock { $0 } }
        func add(_ event: String) { events.withLock { $0.append(event) } }
    }

    /// Waits (up to 30 s: threads run late on a busy machine) until `condition` holds.
    private func wait(until condition: () -> Bool) {
        let start = ContinuousClock.now
        while !condition() && ContinuousClock.now - start < .seconds(30) { POSIX.sleep(.milliseconds(5)) }
    }

    @Test("an earlier deadline scheduled later still fires first; an action that asks to be called again is, then ends")
    func order() throws {
        let watch = DeadlineWatch()
        let log = Log()
        let late = try watch.schedule(
            after: .milliseconds(300),
            fire: {
                log.add("late")
                return nil
            }, end: { log.add("late ended") })
        let calls = Mutex(0)
        let early = try watch.schedule(
            after: .milliseconds(20),
            fire: {
                log.add("early")
                return calls.withLock {
                    $0 += 1
                    return $0
                } < 2 ? .milliseconds(20) : nil
            }, end: { log.add("early ended") })
        wait { log.all.count == 5 }
        #expect(log.all == ["early", "early", "early ended", "late", "late ended"])
        watch.cancel(late) // already ended: nothing more happens
        watch.cancel(early)
        POSIX.sleep(.milliseconds(50))
        #expect(log.all.count == 5)
    }

    @Test(
        "a cancelled action never fires and ends at once; one cancelled while firing ends when it returns, not called again"
    )
    func cancelling() throws {
        let watch = DeadlineWatch()
        let log = Log()
        let pending = try watch.schedule(
            after: .seconds(60),
            fire: {
                log.add("fired")
                return nil
            }, end: { log.add("pending ended") })
        watch.cancel(pending)
        #expect(log.all == ["pending ended"])

        let started = Mutex(false)
        let release = Mutex(false)
        let running = try watch.schedule(
            after: .zero,
            fire: {
                started.withLock { $0 = true }
                while !release.withLock({ $0 }) { POSIX.sleep(.milliseconds(1)) }
                log.add("fire returned")
                return .milliseconds(1)
            }, end: { log.add("running ended") })
        wait { started.withLock { $0 } }
        watch.cancel(running)
        #expect(log.all == ["pending ended"], "end waits for the running action")
        release.withLock { $0 = true }
        wait { log.all.count == 3 }
        POSIX.sleep(.milliseconds(50))
        #expect(log.all == ["pending ended", "fire returned", "running ended"])
    }
}
