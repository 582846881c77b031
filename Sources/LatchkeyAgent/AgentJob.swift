import Latchkey
import LatchkeyCommands
import LatchkeySystem

/// A `run` request the agent checked: the typed command the client parsed and what the client
/// sent with it. The agent runs it through its ``AgentServer/Executor`` (the store commands'
/// ``StoreCommandRunner``); it never sees a command line.
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

    /// The run of its command, as the store commands take it: what the client sent, resolved.
    package var storeRun: StoreRun {
        StoreRun(
            request: request, namespace: .success(namespace), standardInput: standardInput.map { .success($0) },
            passphrase: passphrase.map { .success($0) })
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
package struct ClientRefresh: RefreshCommandRunner {
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
