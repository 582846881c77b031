import Latchkey
import LatchkeyCommands
import LatchkeySystem

// What a `run` request runs: the one place the server uses its runner (``AgentJobRunner``):
// the request checked into a job, its namespace, the job run in its lane (failing fast
// within a silence window) and its outcome sent back.
extension AgentServer {
    /// Runs a `run` request in its namespace's lane, once its client is told it is `accepted`,
    /// and sends the answer: the output in pieces, then the exit status.
    func serveRun(_ request: AgentMessage, arrived: ContinuousClock.Instant, on connection: POSIX.LocalSocket) throws {
        let job: AgentJob
        switch try prepare(request, on: connection) {
        case .failure(let declined):
            try answer(declined.message, on: connection)
            return
        case .success(let prepared): job = prepared
        }
        let patience = request.integer(.patience).map { Duration.milliseconds(Int64(max($0, 0))) }
        let deadline = arrived + (patience ?? AgentClient.answerDeadline)
        let ran = try runInLane(jobs.namespace(of: job), for: connection, deadline: deadline) { lane in
            execute(job, in: lane)
        }
        guard case .ran(let (outcome, audit)) = ran else { return }
        // What the command appended to its audit trails is written; it is made durable (and
        // anchored) once the client has its answer, so the client does not wait for the disk.
        // The agent counts the command as running until then, so it never stops in between.
        defer {
            for (path, error) in audit?.settle() ?? [] {
                log("an audit entry written to \(path) was not made durable after the answer: \(error)")
            }
            finished()
        }
        if outcome.needsPassphrase {
            try answer(AgentMessage(.needsPassphrase), on: connection)
            return
        }
        var result = AgentMessage(.result)
        result.append(.exitStatus, outcome.status)
        try answer(Self.outputMessages(outcome.output) + [result], on: connection)
    }

    /// Checks a `run` request: the job, or the `declined` answer for another version or session bus.
    /// A refresh command the job needs runs in its client, asked on this connection.
    private func prepare(_ request: AgentMessage, on connection: POSIX.LocalSocket) throws -> Result<
        AgentJob, DeclinedRequest
    > {
        guard request.value(.argument) == nil, request.value(.invokedAs) == nil, request.value(.environment) == nil
        else {
            throw LatchkeyError(
                .invalidInput,
                "a run request carries a command line or environment; the agent takes only a typed command")
        }
        // Version 4's flags said whether the client's input was a terminal: the agent never prompts.
        guard request.value(.flags) == nil else {
            throw LatchkeyError(
                .invalidInput, "a run request carries flags; a run request of protocol version 5 has none")
        }
        guard let command = request.value(.command) else {
            throw LatchkeyError(.invalidInput, "a run request without its command")
        }
        guard request.text(.toolVersion) == jobs.toolVersion else {
            return .failure(DeclinedRequest("this agent runs latchkey \(jobs.toolVersion)"))
        }
        guard request.text(.sessionBus) == POSIX.environmentValue("DBUS_SESSION_BUS_ADDRESS") else {
            return .failure(DeclinedRequest("the client is on another D-Bus session bus"))
        }
        guard let namespace = request.value(.namespace) else {
            throw LatchkeyError(.invalidInput, "a run request without its namespace")
        }
        let resolved = try ResolvedNamespace(decoding: namespace)
        let typed = try StoreRequest(decoding: command)
        guard connection.takePassedDescriptors().isEmpty else {
            throw LatchkeyError(.invalidInput, "a run request passed descriptors; none are taken")
        }
        return .success(
            AgentJob(
                request: typed, namespace: resolved,
                standardInput: request.value(.standardInput), passphrase: request.value(.passphrase),
                client: ClientRefresh(connection)))
    }

    /// Runs a command for a client (counted as running from `accepted` until its answer is
    /// sent and its audit appends are settled), on its namespace's vault from the pool. Within
    /// the silence window after a command of its namespace missed the Secret Service deadline,
    /// it fails fast with that miss's error instead of waiting a deadline of its own (a command
    /// that does not use the Secret Service still runs); a miss opens the window, for as long
    /// as the deadline that was missed.
    /// - Returns: The outcome, and the audit appends to settle once the answer is sent.
    private func execute(_ job: AgentJob, in lane: AgentLane) -> (AgentJobOutcome, AuditSyncDeferral?) {
        let namespace = jobs.namespace(of: job)
        let source = AgentVaultSource(pool: vaults, failingFastWith: vaults.silentFailure(of: namespace))
        let outcome = jobs.run(job, vaults: source)
        if outcome.failedFast {
            log("a command failed fast: its namespace's Secret Service missed a deadline moments ago")
        } else if let miss = outcome.missedDeadline {
            vaults.silence(namespace, for: miss.deadline, failingWith: miss.failure)
            log(
                "a command missed the Secret Service deadline (\(miss.deadline)); its namespace's queued commands fail fast for as long"
            )
        }
        return (outcome, vaults.commandEnded(namespace, succeeded: outcome.status == 0))
    }
}
