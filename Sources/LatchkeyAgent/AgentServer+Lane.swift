import Latchkey
import LatchkeySystem

// The namespace lane's side of a `run` request: the queue bound, and, at the front of the
// queue, dropping a stale request or telling its client `accepted`.
extension AgentServer {
    /// What became of a request given to its namespace's lane.
    enum LaneResult<T> {
        /// It ran (it was `accepted`), and gave this.
        case ran(T)
        /// It was not run: the lane was full (its client was told `declined`), or it was
        /// dropped at the front of the queue (said in the log).
        case notRun
    }

    /// Runs `body` in the lane of `namespace` once every earlier request of that namespace
    /// ended, when its client still waits (before `deadline`, its patience) and was told
    /// `accepted`; `body` is counted as running from then on (``finished()`` ends that). A
    /// full lane declines it.
    /// - Throws: `.timedOut` or `.io` when the client does not take the `declined` answer.
    func runInLane<T>(
        _ namespace: String, for connection: POSIX.LocalSocket, deadline: ContinuousClock.Instant,
        _ body: (AgentLane) -> T
    ) throws -> LaneResult<T> {
        let lane = lanes.withLock { lanes in
            if let lane = lanes[namespace] { return lane }
            let lane = AgentLane()
            lanes[namespace] = lane
            return lane
        }
        let result = lane.run(within: limits.maximumQueued) { () -> T? in
            guard let reason = startable(connection, deadline: deadline) else { return body(lane) }
            log("dropped a request before running it: \(reason)")
            return nil
        }
        switch result {
        case .none:
            try answer(
                DeclinedRequest("\(limits.maximumQueued) commands already wait for this namespace").message,
                on: connection)
            return .notRun
        case .some(.none): return .notRun
        case .some(.some(let value)): return .ran(value)
        }
    }

    /// How many commands wait for (or run in) the lane of `namespace`.
    package func commandsWaiting(in namespace: String) -> Int {
        lanes.withLock { $0[namespace]?.count ?? 0 }
    }

    /// Ends counting a command that ``runInLane(_:for:deadline:_:)`` ran as running.
    func finished() {
        activity.withLock { $0.running -= 1 }
    }

    /// Nil when the request at the front of its queue may run: its client still waits
    /// and was told `accepted`, and the agent is not stopping. Else why not. A stopping agent
    /// never says `accepted`: it tells the client `declined` (so the client runs the command
    /// itself), and one that says `accepted` counts the command as running first, so it runs
    /// before the agent stops.
    private func startable(_ connection: POSIX.LocalSocket, deadline: ContinuousClock.Instant) -> String? {
        guard clock.now() < deadline else { return "its client's patience ran out while it waited" }
        guard connection.pending() == .nothing else { return "its client hung up while it waited" }
        let started = activity.withLock { activity -> Bool in
            guard !activity.stopping else { return false }
            activity.running += 1
            return true
        }
        guard started else {
            // The client runs it in-process; one that no longer waits has nothing to be told.
            try? answer(DeclinedRequest("the agent is stopping").message, on: connection)
            return "the agent is stopping"
        }
        do {
            // Fails once the client stopped waiting (it shuts its reading down first): then it is not run here.
            try answer(AgentMessage(.accepted), on: connection)
        } catch {
            finished()
            return "its client stopped waiting (\(error))"
        }
        return nil
    }
}
