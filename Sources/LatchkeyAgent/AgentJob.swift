import Latchkey
import LatchkeyCommands
import LatchkeySystem

/// A `run` request the agent checked: the typed command the client parsed and what the client
/// sent with it. The agent runs it through an ``AgentJobRunner``; it never sees a command line.
package struct AgentJob: Sendable {
    /// The command and the shape of its output.
    package var request: StoreRequest
    /// The namespace the command works in, as the client resolved it.
    package var namespace: ResolvedNamespace
    /// The client's standard input, read to its end, when the command reads it.
    package var standardInput: SecretBytes?
    /// The passphrase the client read or asked for, if any.
    package var passphrase: SecretBytes?
    /// Its client, which runs a refresh command the command needs.
    package var client: ClientRefresh?

    /// A job of these parts.
    package init(
        request: StoreRequest, namespace: ResolvedNamespace,
        standardInput: SecretBytes?, passphrase: SecretBytes?, client: ClientRefresh? = nil
    ) {
        self.request = request
        self.namespace = namespace
        self.standardInput = standardInput
        self.passphrase = passphrase
        self.client = client
    }
}

/// What a refresh command (`session get --refresh-command CMD`) did, in whichever process ran
/// it: the client's own, which runs it for the agent too (``ClientRefresh``).
package struct RefreshCommandRun: Sendable {
    /// Its exit status; nil when a signal ended it.
    package var status: Int32?
    /// What it wrote to standard output.
    package var output: SecretBytes
    /// Whether it was stopped for running past its deadline.
    package var timedOut: Bool

    /// A run of these parts.
    package init(status: Int32?, output: SecretBytes, timedOut: Bool) {
        self.status = status
        self.output = output
        self.timedOut = timedOut
    }
}

// Kept beside the types they carry, not in AgentMessage.swift, which the fuzz target compiles alone.
extension AgentMessage {
    /// A `refreshAnswer`: what the refresh command did, or the error running it met.
    package static func refreshAnswer(_ result: Result<RefreshCommandRun, LatchkeyError>) -> AgentMessage {
        var answer = AgentMessage(.refreshAnswer)
        switch result {
        case .success(let run):
            if let status = run.status { answer.append(.exitStatus, status) }
            answer.fields.append((.flags, SecretBytes([run.timedOut ? 1 : 0])))
            answer.fields.append((.refreshOutput, run.output))
        case .failure(let error):
            answer.append(.errorCode, error.code.rawValue)
            answer.append(.text, error.message)
        }
        return answer
    }

    /// What a `refreshAnswer` says the refresh command did.
    /// - Throws: The error it names; `.invalidInput` for an answer without its fields.
    package func refreshCommandRun() throws -> RefreshCommandRun {
        if let code = text(.errorCode) {
            throw LatchkeyError(LatchkeyError.Code(rawValue: code), text(.text) ?? "")
        }
        guard let output = value(.refreshOutput), let flags = value(.flags), flags.count == 1 else {
            throw LatchkeyError(.invalidInput, "a refresh answer without the refresh command's output")
        }
        return RefreshCommandRun(
            status: integer(.exitStatus), output: output, timedOut: flags.withUnsafeBytes { $0[0] & 1 == 1 })
    }
}

/// The client of a job, for what only its process can do: a refresh command runs there, with the
/// client's environment, working directory and standard error, never the agent's. The agent
/// sends it `refresh` (the refresh token) on the job's connection and waits for its
/// `refreshAnswer`.
package struct ClientRefresh: Sendable {
    private let connection: POSIX.LocalSocket

    init(_ connection: POSIX.LocalSocket) {
        self.connection = connection
    }

    /// Has the client run its refresh command with `refreshToken` on its standard input.
    /// - Parameter deadline: How long the client may take to answer (the command's own deadline and a margin).
    /// - Returns: What the command did, or nil when the client did not answer in time (it
    ///   ended, say, or was killed): the refresh then got no answer, and the grant is kept.
    /// - Throws: The error the client met running it (it could not start, or wrote too much).
    package func run(refreshToken: SecretBytes, deadline: Duration) throws -> RefreshCommandRun? {
        let request = AgentMessage(.refresh, [(.refreshToken, refreshToken)])
        guard (try? connection.send(request, before: .now + deadline)) != nil,
            let answer = try? connection.receiveMessage(before: .now + deadline)?.message,
            answer.kind == .refreshAnswer
        else { return nil }
        return try answer.refreshCommandRun()
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
    /// Whether it failed fast (``AgentVaultSource/failingFast``) without asking the service.
    package var failedFast: Bool

    /// An outcome of these parts.
    package init(
        status: Int32, output: [(stream: AgentOutputStream, bytes: SecretBytes)], needsPassphrase: Bool,
        missedDeadline: (failure: LatchkeyError, deadline: Duration)?, failedFast: Bool
    ) {
        self.status = status
        self.output = output
        self.needsPassphrase = needsPassphrase
        self.missedDeadline = missedDeadline
        self.failedFast = failedFast
    }
}

/// What runs the typed commands the agent serves, given explicitly what the client sent
/// (never through ambient state, never a command line).
///
/// The agent calls ``run(_:vaults:)`` on one of its namespace queues: calls for
/// one namespace (``namespace(of:)``) never overlap, calls for different ones may.
package protocol AgentJobRunner: Sendable {
    /// The tool version the agent answers for; a client of another version is declined.
    var toolVersion: String { get }
    /// The exit status the tool documents for an error of `code` (the agent ends with
    /// the timeout's when a Secret Service call never returns).
    func exitStatus(of code: LatchkeyError.Code) -> Int32
    /// The queue of the job's namespace (store directory and app), as one key: the
    /// namespace the client resolved (``ResolvedNamespace/queueKey``), never read from its command line.
    func namespace(of job: AgentJob) -> String
    /// Runs the job to its end, getting its vaults only from `vaults`.
    /// - Parameters:
    ///   - job: The job.
    ///   - vaults: Where the command gets its vaults: opened with the client's passphrase or
    ///     the agent's unlock cache; within a silence window, a vault that would ask the
    ///     Secret Service is refused with the missed deadline's error (the command fails fast).
    func run(_ job: AgentJob, vaults: AgentVaultSource) -> AgentJobOutcome
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
