import Latchkey
import LatchkeySystem

// The listener and admission: the threads that accept connections, and the rules a
// connection passes before it is read (its peer's uid, the total and per-process caps).
extension AgentServer {
    /// Starts the first thread that waits for connections on the listening socket.
    /// - Throws: `.io` when no thread can be started.
    func startAcceptingConnections() throws {
        waitingThreads.withLock { $0 += 1 }
        try POSIX.startThread { self.acceptConnections() }
    }

    /// Starts one more thread waiting for a connection (counted as waiting from now).
    private func startAcceptor() {
        waitingThreads.withLock { $0 += 1 }
        do {
            try POSIX.startThread { self.acceptConnections() }
        } catch {
            waitingThreads.withLock { $0 -= 1 }
            log("cannot start a thread for connections: \(error)")
        }
    }

    /// Waits for a connection and serves it on this thread, then waits for the next
    /// one, or ends when enough threads already wait. A thread that takes a connection
    /// first makes sure another waits for the next one (starting it when none is left),
    /// so every connection is accepted as it comes and each is read on a thread of its
    /// own, as with a thread started per connection, without starting one per connection.
    private func acceptConnections() {
        guard let listener = endpoint?.listener else { return }
        while true {
            let connection: POSIX.LocalSocket
            do {
                connection = try listener.accept()
            } catch {
                log("accepting failed: \(error)")
                POSIX.sleep(.milliseconds(100))
                continue
            }
            if waitingThreads.withLock({ waiting in
                waiting -= 1
                return waiting == 0
            }) {
                startAcceptor()
            }
            serve(connection)
            let waitsAgain = waitingThreads.withLock { waiting -> Bool in
                guard waiting < Self.spareThreads else { return false }
                waiting += 1
                return true
            }
            guard waitsAgain else { return }
        }
    }

    /// Serves a connection just accepted, on this thread, when its peer is admitted.
    private func serve(_ connection: POSIX.LocalSocket) {
        let peer: (processID: Int32, userID: UInt32)
        do {
            peer = try connection.peerCredentials()
        } catch {
            log("refused a connection: \(error)")
            return
        }
        serve(connection, peer: peer)
    }

    /// Serves `connection`, whose peer is `peer`, on this thread: admitted, read and
    /// answered, its slot given back; or refused (closed when released).
    private func serve(_ connection: POSIX.LocalSocket, peer: (processID: Int32, userID: UInt32)) {
        guard admit(peer) else { return }
        handle(connection)
        release(peer.processID)
    }

    /// Serves a connection handed to this server (a test's end of a socketpair) on a thread
    /// of its own, as if its peer were `peer`: the process id and user id the kernel reports
    /// for the other end of an accepted connection.
    /// - Throws: `.io` when no thread can be started.
    package func take(_ connection: POSIX.LocalSocket, peer: (processID: Int32, userID: UInt32)) throws {
        try POSIX.startThread { self.serve(connection, peer: peer) }
    }

    /// Takes a slot for a connection just accepted: its peer must run as this user, and
    /// neither all connections nor that process's may be at their limit; refused otherwise,
    /// saying why in the log.
    /// - Returns: Whether it took a slot (given back with ``release(_:)``).
    private func admit(_ peer: (processID: Int32, userID: UInt32)) -> Bool {
        guard peer.userID == POSIX.effectiveUserID else {
            log("refused a connection from user \(peer.userID): this agent serves only user \(POSIX.effectiveUserID)")
            return false
        }
        let now = clock.now()
        let refusal = activity.withLock { activity -> String? in
            guard activity.open < limits.maximumConnections else { return "\(limits.maximumConnections) are open" }
            guard activity.openByProcess[peer.processID, default: 0] < limits.maximumConnectionsPerProcess else {
                return "process \(peer.processID) already holds \(limits.maximumConnectionsPerProcess)"
            }
            activity.open += 1
            activity.openByProcess[peer.processID, default: 0] += 1
            activity.last = now
            return nil
        }
        if let refusal {
            log("refused a connection: \(refusal)")
            return false
        }
        return true
    }

    /// Gives back the slot of a connection of `process` that ended.
    private func release(_ process: Int32) {
        let now = clock.now()
        activity.withLock { activity in
            activity.open -= 1
            activity.openByProcess[process, default: 1] -= 1
            if activity.openByProcess[process] == 0 { activity.openByProcess[process] = nil }
            activity.last = now
        }
    }
}
