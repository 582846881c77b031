import Latchkey
import LatchkeySystem

/// A `run` request the agent checked: a command line and what the client sent
/// with it. The agent runs it through an ``AgentJobRunner``.
package struct AgentJob: Sendable {
    /// The arguments after the tool's name.
    package var arguments: [String]
    /// The name the client was invoked as (`git-credential-latchkey` speaks git's protocol).
    package var invokedAs: String
    /// The variables the client sent (only those ``AgentJobRunner/forwardedVariables`` names).
    package var environment: [String: String]
    /// Whether the client's standard input is a terminal.
    package var inputIsTerminal: Bool
    /// The client's standard input, read to its end, when the command reads it.
    package var standardInput: SecretBytes?
    /// The passphrase the client read or asked for, if any.
    package var passphrase: SecretBytes?
    /// What a program the command starts (a refresh command) takes from the client; nil when
    /// the command starts none.
    package var client: ClientWorld?

    /// A job of these parts.
    package init(
        arguments: [String], invokedAs: String, environment: [String: String], inputIsTerminal: Bool,
        standardInput: SecretBytes?, passphrase: SecretBytes?, client: ClientWorld? = nil
    ) {
        self.arguments = arguments
        self.invokedAs = invokedAs
        self.environment = environment
        self.inputIsTerminal = inputIsTerminal
        self.standardInput = standardInput
        self.passphrase = passphrase
        self.client = client
    }
}

/// What a program that a command starts for a client (a refresh command) runs with, as it
/// would in the client's own process: the client's whole environment, its working directory
/// and its standard error (descriptors the client passed over the socket), never the agent's.
package struct ClientWorld: Sendable {
    /// The client's environment, each variable as `NAME=VALUE` (a value may be a secret).
    package var environment: [SecretBytes]
    /// The client's working directory, open.
    package var workingDirectory: POSIX.Descriptor
    /// The client's standard error.
    package var standardError: POSIX.Descriptor

    /// A world of these parts.
    package init(environment: [SecretBytes], workingDirectory: POSIX.Descriptor, standardError: POSIX.Descriptor) {
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.standardError = standardError
    }
}

/// The standard stream a piece of a command's output belongs to.
package enum AgentOutputStream: Sendable {
    /// Standard output.
    case output
    /// Standard error.
    case error
}

/// What running an ``AgentJob`` gave: its output, in the order written, and its exit status.
package struct AgentJobOutcome: Sendable {
    /// The exit status.
    package var status: Int32
    /// What it wrote, in order.
    package var output: [(stream: AgentOutputStream, bytes: SecretBytes)]
    /// Whether it stopped for a passphrase the agent does not hold (the client asks and sends it again).
    package var needsPassphrase: Bool
    /// When it failed because the Secret Service did not answer within its deadline: that
    /// error, and the deadline it missed.
    package var missedDeadline: (failure: LatchkeyError, deadline: Duration)?
    /// Whether it failed fast (``AgentJobRunner/run(_:unlocked:failingFastWith:)``) without asking the service.
    package var failedFast: Bool
    /// The audit appends whose `fsync` and anchor move wait for the answer to be sent.
    package var auditSync: AuditSyncDeferral?

    /// An outcome of these parts.
    package init(
        status: Int32, output: [(stream: AgentOutputStream, bytes: SecretBytes)], needsPassphrase: Bool,
        missedDeadline: (failure: LatchkeyError, deadline: Duration)?, failedFast: Bool,
        auditSync: AuditSyncDeferral? = nil
    ) {
        self.status = status
        self.output = output
        self.needsPassphrase = needsPassphrase
        self.missedDeadline = missedDeadline
        self.failedFast = failedFast
        self.auditSync = auditSync
    }
}

/// What runs the commands the agent serves: the command line's own commands,
/// given explicitly what the client sent (never through ambient state).
///
/// The agent calls ``run(_:unlocked:)`` on one of its namespace queues: calls for
/// one namespace (``namespace(of:)``) never overlap, calls for different ones may.
package protocol AgentJobRunner: Sendable {
    /// The tool version the agent answers for; a client of another version is declined.
    var toolVersion: String { get }
    /// The environment variables a client may send.
    var forwardedVariables: [String] { get }
    /// The exit status the tool documents for an error of `code` (the agent ends with
    /// the timeout's when a Secret Service call never returns).
    func exitStatus(of code: LatchkeyError.Code) -> Int32
    /// The namespace (store directory and app) the job's command line names, as one key;
    /// "" when it names none.
    func namespace(of job: AgentJob) -> String
    /// Runs the job to its end, with the agent's unlock cache.
    /// - Parameters:
    ///   - job: The job.
    ///   - unlocked: The agent's unlock cache.
    ///   - failure: When a command of the job's namespace just missed the Secret Service
    ///     deadline: that error, which the job fails with at once, as the missed one did, if
    ///     it would ask the Secret Service.
    func run(_ job: AgentJob, unlocked: UnlockCache, failingFastWith failure: LatchkeyError?) -> AgentJobOutcome
}

extension SecretBytes {
    /// The bytes in pieces of at most `length` bytes each, in order (one piece when they fit).
    func pieces(ofAtMost length: Int) -> [SecretBytes] {
        guard count > length else { return [self] }
        return withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count, by: length).map { start in
                SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[start..<min(start + length, bytes.count)]))
            }
        }
    }
}
