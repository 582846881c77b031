import Latchkey
import LatchkeyAgent
import LatchkeyCommands

/// What the agent runs: a typed command (``StoreCommand``), never a command line, against an
/// ``Execution`` made of what its client sent (its input, its passphrase, whether its input is
/// a terminal), the vaults the agent gives it (``AgentVaultSource``) and a capture of the
/// output, in the namespace the client resolved.
struct StoreCommandJobs: AgentJobRunner {
    var toolVersion: String { Tool.version }

    func exitStatus(of code: LatchkeyError.Code) -> Int32 { code.exitStatus }

    func namespace(of job: AgentJob) -> String { job.namespace.queueKey }

    func run(_ job: AgentJob, vaults: AgentVaultSource) -> AgentJobOutcome {
        let capture = Execution.Capture()
        let execution = Execution(
            // No terminal to ask on here: the client asks (for a passphrase, a confirmation) itself.
            input: job.standardInput.map { .success($0) }, inputIsTerminal: false,
            passphrase: job.passphrase, capture: capture, vaults: vaults, client: job.client)
        let context = Context(job, execution)
        let outcome = StoreCommands.execute(job.request.command, context)
        // A timeout of its own (not a fail-fast refusal) opens a silence window as long as its
        // policy's Secret Service deadline.
        let policy = outcome.failure?.code == .timedOut && !vaults.failedFast ? try? context.policy() : nil
        let missed = outcome.failure.flatMap { error in
            policy.map { (error, Duration.milliseconds(Int64($0.secretServiceTimeout * 1000))) }
        }
        return AgentJobOutcome(
            status: outcome.status, output: capture.take(), needsPassphrase: outcome.passphrasePrompt != nil,
            missedDeadline: missed, failedFast: vaults.failedFast)
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
        namespace = job.namespace
        readsStandardInput = job.request.command.readsStandardInput
    }
}
