import Latchkey
import LatchkeyCommands
import LatchkeySystem

// What a `run` request runs: the one place the server runs a command (its ``Executor``): the
// request checked into a job, its namespace, the job run in its lane (failing fast within a
// silence window) and its result sent back.
extension AgentServer {
    /// What runs a checked request on the server: in the agent, the store commands
    /// (``StoreCommandRunner``) on the namespace's vault from the pool; in the server's unit
    /// tests, a test's own, to hold or fail a command when the test says.
    package struct Executor: Sendable {
        /// Runs the job to its end, getting its vaults only from `vaults`.
        let run: @Sendable (AgentJob, AgentVaultSource) -> StoreRunResult

        /// An executor that runs a job with `run`.
        package init(_ run: @escaping @Sendable (_ job: AgentJob, _ vaults: AgentVaultSource) -> StoreRunResult) {
            self.run = run
        }

        /// The store commands: the typed command run by ``StoreCommandRunner``, with the input and
        /// passphrase its client sent, a refresh command run by its client.
        package static let storeCommands = Executor { job, vaults in
            StoreCommandRunner.run(job.storeRun, vaults: vaults, refresh: job.client)
        }
    }

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
        let ran = try runInLane(job.namespace.queueKey, for: connection, deadline: deadline) { lane in
            execute(job, in: lane)
        }
        guard case .ran(let (result, audit)) = ran else { return }
        // What the command appended to its audit trails is written; it is made durable (and
        // anchored) once the client has its answer, so the client does not wait for the disk.
        // The agent counts the command as running until then, so it never stops in between.
        defer {
            for (path, error) in audit?.settle() ?? [] {
                log("an audit entry written to \(path) was not made durable after the answer: \(error)")
            }
            finished()
        }
        if result.passphrasePrompt != nil {
            try answer(AgentMessage(.needsPassphrase), on: connection)
            return
        }
        var message = AgentMessage(.result)
        message.append(.exitStatus, result.status)
        try answer(Self.outputMessages(result.output) + [message], on: connection)
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
        guard request.text(.toolVersion) == ToolVersion.current else {
            return .failure(DeclinedRequest("this agent runs latchkey \(ToolVersion.current)"))
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
    /// - Returns: The result, and the audit appends to settle once the answer is sent.
    private func execute(_ job: AgentJob, in lane: AgentLane) -> (StoreRunResult, AuditSyncDeferral?) {
        let namespace = job.namespace.queueKey
        let source = AgentVaultSource(pool: vaults, failingFastWith: vaults.silentFailure(of: namespace))
        let result = executor.run(job, source)
        let missed = Self.missedDeadline(of: result, in: job.namespace, failedFast: source.failedFast)
        if source.failedFast {
            log("a command failed fast: its namespace's Secret Service missed a deadline moments ago")
        } else if let miss = missed {
            vaults.silence(namespace, for: miss.deadline, failingWith: miss.failure)
            log(
                "a command missed the Secret Service deadline (\(miss.deadline)); its namespace's queued commands fail fast for as long"
            )
        }
        return (result, vaults.commandEnded(namespace, succeeded: result.status == 0))
    }

    /// The Secret Service deadline a command missed, when it timed out of its own (not by
    /// failing fast): its policy's, which a silence window then lasts; nil otherwise.
    private static func missedDeadline(of result: StoreRunResult, in namespace: ResolvedNamespace, failedFast: Bool)
        -> (failure: LatchkeyError, deadline: Duration)?
    {
        guard let failure = result.failure, failure.code == .timedOut, !failedFast,
            let policy = try? VaultSettings.policy(given: namespace.policy, default: .default, environment: [:]).0
        else { return nil }
        return (failure, .milliseconds(Int64(policy.secretServiceTimeout * 1000)))
    }
}
