import Dispatch
import Synchronization

/// Runs actions at deadlines, all on one thread of the process's own (started
/// with the first), which sleeps until the earliest. It stands in for a Dispatch
/// timer source per libsecret call, which started Dispatch's manager thread and a
/// worker thread in every process that talked to the Secret Service.
final class DeadlineWatch: Sendable {
    /// The process's watch.
    static let shared = DeadlineWatch()

    /// One scheduled action.
    struct Ticket: Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry: Sendable {
        let id: UInt64
        var due: ContinuousClock.Instant
        /// Called at `due`; a duration it returns schedules it again that much later.
        let fire: @Sendable () -> Duration?
        /// Called once when the entry ends: cancelled, or done firing.
        let end: @Sendable () -> Void
    }

    private struct State {
        var nextID: UInt64 = 0
        var entries: [Entry] = []
        /// The entry whose `fire` is running, and whether it was cancelled meanwhile.
        var firing: (id: UInt64, cancelled: Bool)?
        var isStarted = false
    }

    private let state = Mutex(State())
    /// Signalled when an entry is added, so the thread looks again at the earliest deadline.
    private let wake = DispatchSemaphore(value: 0)

    /// Calls `fire` on the watch's thread `delay` from now, and again each time it
    /// returns a duration, that much later; then `end`. Cancelling the ticket stops
    /// it: `end` then runs at once, or, when `fire` is running, as soon as it returns.
    /// - Throws: `.io` when the watch's thread cannot be started.
    func schedule(
        after delay: Duration, fire: @escaping @Sendable () -> Duration?,
        end: @escaping @Sendable () -> Void
    ) throws -> Ticket {
        let (ticket, mustStart) = state.withLock { state in
            state.nextID += 1
            state.entries.append(Entry(id: state.nextID, due: .now + max(delay, .zero), fire: fire, end: end))
            defer { state.isStarted = true }
            return (Ticket(id: state.nextID), !state.isStarted)
        }
        if mustStart {
            do {
                try POSIX.startThread { [self] in run() }
            } catch {
                state.withLock { $0.isStarted = false }
                cancel(ticket)
                throw error
            }
        }
        wake.signal()
        return ticket
    }

    /// Stops `ticket`'s action: it is not called again (a call running now finishes).
    func cancel(_ ticket: Ticket) {
        let removed = state.withLock { state -> Entry? in
            if state.firing?.id == ticket.id { state.firing?.cancelled = true }
            guard let index = state.entries.firstIndex(where: { $0.id == ticket.id }) else { return nil }
            return state.entries.remove(at: index)
        }
        removed?.end()
    }

    /// The watch's thread: sleeps until the earliest deadline (or a new entry), then fires what is due.
    private func run() {
        while true {
            let next = state.withLock { state -> (due: Entry?, earliest: ContinuousClock.Instant?) in
                guard let index = state.entries.indices.min(by: { state.entries[$0].due < state.entries[$1].due })
                else { return (nil, nil) }
                guard state.entries[index].due <= .now else { return (nil, state.entries[index].due) }
                let entry = state.entries.remove(at: index)
                state.firing = (entry.id, false)
                return (entry, nil)
            }
            guard var entry = next.due else {
                if let earliest = next.earliest {
                    _ = wake.wait(timeout: .fromNow(earliest - .now))
                } else {
                    wake.wait()
                }
                continue
            }
            let again = entry.fire()
            let rescheduled = state.withLock { state -> Bool in
                defer { state.firing = nil }
                guard let again, state.firing?.cancelled == false else { return false }
                entry.due = .now + again
                state.entries.append(entry)
                return true
            }
            if !rescheduled { entry.end() }
        }
    }
}

extension DispatchTime {
    /// The dispatch time `duration` from now; a negative duration means now, and one
    /// too long to count in nanoseconds never.
    static func fromNow(_ duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .distantFuture }
        return .now() + .nanoseconds(Int(clamping: max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000)))
    }
}
