import Latchkey
import LatchkeyAgent
import LatchkeyCommands

/// What the agent runs: a typed command (``StoreCommand``), never a command line, against an
/// ``Execution`` made of what its client sent (its input, its passphrase, whether its input is
/// a terminal), the agent's unlock cache and a capture of the output, in the namespace the
/// client resolved.
struct StoreCommandJobs: AgentJobRunner {
    var toolVersion: String { Tool.version }

    func exitStatus(of code: LatchkeyError.Code) -> Int32 { code.exitStatus }

    func namespace(of job: AgentJob) -> String { job.namespace.queueKey }

    func run(_ job: AgentJob, unlocked: UnlockCache, failingFastWith failure: LatchkeyError?) -> AgentJobOutcome {
        let capture = Execution.Capture()
        let auditSync = AuditSyncDeferral()
        let execution = Execution(
            input: job.standardInput.map { .success($0) }, inputIsTerminal: job.inputIsTerminal,
            passphrase: job.passphrase, capture: capture, unlocked: unlocked, failingFastWith: failure,
            auditSync: auditSync, client: job.client)
        let context = Context(job, execution)
        let outcome = StoreCommands.execute(job.request.command, context)
        // It failed fast when it failed with the error it was to fail fast with, before asking a
        // Secret Service (``Context/openVault(unlocking:)``); a timeout of its own opens a silence
        // window as long as its policy's Secret Service deadline.
        let policy = outcome.failure?.code == .timedOut ? try? context.policy() : nil
        let failedFast =
            failure != nil && outcome.failure == failure
            && ((try? context.backendChoice()) ?? nil ?? policy?.backend) != .file
        let missed = outcome.failure.flatMap { error in
            failedFast ? nil : policy.map { (error, Duration.milliseconds(Int64($0.secretServiceTimeout * 1000))) }
        }
        return AgentJobOutcome(
            status: outcome.status, output: capture.take(), needsPassphrase: outcome.passphrasePrompt != nil,
            missedDeadline: missed, failedFast: failedFast, auditSync: auditSync)
    }
}

extension Context {
    /// The context of a job the agent runs: its namespace as the client resolved it, in
    /// place of any option or variable (the agent reads no client environment).
    init(_ job: AgentJob, _ execution: Execution) {
        var globals = GlobalOptions()
        globals.app = job.namespace.app
        globals.policy = job.namespace.policy
        globals.storeDirectory = job.namespace.storeDirectory
        globals.backend = job.namespace.backend.flatMap(Policy.BackendChoice.init(rawValue:))
        globals.json = job.request.json
        self.init(
            globals: globals, output: Output(json: job.request.json, execution: execution),
            environment: Environment([:]))
        sessionUnlock = Policy.SecretServiceUnlock(rawValue: job.namespace.sessionUnlock)
        readsStandardInput = job.request.command.readsStandardInput
    }
}
