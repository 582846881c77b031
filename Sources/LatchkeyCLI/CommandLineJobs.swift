import Latchkey
import LatchkeyAgent
import LatchkeyCommands

/// What the agent runs: the command line's own commands, each against an
/// ``Execution`` made of what its client sent (its input, its passphrase, whether
/// its input is a terminal), the agent's pool of open vaults and a capture of the output.
struct CommandLineJobs: AgentJobRunner {
    var toolVersion: String { Tool.version }

    var forwardedVariables: [String] { Environment.forwarded }

    func exitStatus(of code: LatchkeyError.Code) -> Int32 { code.exitStatus }

    func namespace(of job: AgentJob) -> String { job.namespace.queueKey }

    func run(_ job: AgentJob, vaults: any VaultSource, failingFastWith failure: LatchkeyError?) -> AgentJobOutcome {
        let capture = Execution.Capture()
        let execution = Execution(
            input: job.standardInput.map { .success($0) }, inputIsTerminal: job.inputIsTerminal,
            passphrase: job.passphrase, capture: capture, vaults: vaults, failingFastWith: failure,
            client: job.client)
        let status = runTool(
            job.arguments, invokedAs: job.invokedAs, environment: Environment(job.environment), execution: execution,
            viaAgent: false)
        let report = execution.report.withLock { $0 }
        let missed = report.failure.flatMap { failure in
            failure.code == .timedOut && !report.failedFast ? report.serviceDeadline.map { (failure, $0) } : nil
        }
        return AgentJobOutcome(
            status: status, output: capture.take(), needsPassphrase: execution.passphraseNeeded.withLock { $0 } != nil,
            missedDeadline: missed, failedFast: report.failedFast)
    }

    /// The words of a command line as the tool reads them: the name it was invoked as
    /// (`git-credential-latchkey`, `docker-credential-latchkey`) names the command.
    static func words(_ line: [String], invokedAs: String) -> ArraySlice<String> {
        var arguments = line[...]
        if invokedAs == "git-credential-latchkey" { arguments.insert("git-credential", at: arguments.startIndex) }
        if invokedAs == DockerCommands.invokedName { arguments.insert("docker-credential", at: arguments.startIndex) }
        return arguments
    }
}
