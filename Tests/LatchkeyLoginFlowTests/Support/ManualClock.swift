import Synchronization

/// A clock that moves only when a test advances it; its instants are the
/// continuous clock's, as `LoginController` requires.
final class ManualClock: Clock, Sendable {
    private struct Sleeper {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Timeline {
        var now: ContinuousClock.Instant
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
    }

    private let timeline: Mutex<Timeline>

    init(start: ContinuousClock.Instant = Fixtures.origin) {
        timeline = Mutex(Timeline(now: start))
    }

    var now: ContinuousClock.Instant { timeline.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping on this clock.
    var sleeping: Int { timeline.withLock { $0.sleepers.count } }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        let id = timeline.withLock { timeline in
            timeline.nextID += 1
            return timeline.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = timeline.withLock { timeline in
                    if deadline <= timeline.now || Task.isCancelled { return true }
                    timeline.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            try Task.checkCancellation()
        } onCancel: {
            let sleeper = timeline.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline passed.
    func advance(by duration: Duration) {
        let due: [Sleeper] = timeline.withLock { timeline in
            timeline.now = timeline.now.advanced(by: duration)
            let now = timeline.now
            let due = timeline.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { timeline.sleepers[id] = nil }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

/// Waits (a bounded number of short real sleeps) until `condition` holds.
/// - Returns: Whether it held in time.
func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<2_000 {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return await condition()
}
