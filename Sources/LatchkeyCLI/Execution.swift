import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeySystem
import Synchronization

/// What one run of a command works against, passed to it explicitly (in the
/// ``Context`` and the ``Output``; there is no ambient state): its standard
/// streams, its standard input, the passphrase its client gave, and inside the
/// agent the pool of open vaults. A command run in this process uses the process's own
/// streams (``process(inputIsTerminal:)``); one the agent runs for a client, or one
/// the client runs in-process after it already read its input, uses what the
/// client read, and in the agent writes into a ``Capture`` sent back to the client.
/// Writes go through the library's POSIX wrappers and the tools' system layer
/// (LatchkeySystem), and a secret is written without being copied into a `String`.
final class Execution: Sendable {
    /// A standard stream a command writes to: the one type of the output pieces the agent
    /// sends back and of the streams this process writes.
    typealias Stream = AgentOutputStream

    /// Standard input, already read, or why it could not be (nil: the process's own, read when asked).
    private let input: Mutex<Result<SecretBytes, LatchkeyError>?>
    /// Whether standard input is a terminal (the client's, inside the agent).
    let inputIsTerminal: Bool
    /// The passphrase the client read or asked for, if any.
    let passphrase: SecretBytes?
    /// Where the output goes when it is sent back to a client (the agent); nil: the process's own streams.
    let capture: Capture?
    /// Inside the agent: where a command gets its namespace's vault (the agent's pool); nil outside the agent.
    let vaults: (any VaultSource)?
    /// Inside the agent: the client, in whose process a refresh command runs; nil: this process.
    let client: ClientRefresh?
    /// The prompt to show when the command needed a passphrase the agent does not hold.
    let passphraseNeeded = Mutex<String?>(nil)
    /// Inside the agent, just after a command of the namespace missed the Secret Service
    /// deadline: the error a command that would ask the service fails with at once.
    let failFast: LatchkeyError?
    /// What the run met, for the agent: how it failed, the Secret Service deadline of its
    /// policy, and whether it failed fast.
    let report = Mutex<(failure: LatchkeyError?, serviceDeadline: Duration?, failedFast: Bool)>((nil, nil, false))

    /// An execution of these parts.
    /// - Parameters:
    ///   - input: Standard input already read (or why it could not be); nil: the process's own.
    ///   - inputIsTerminal: Whether standard input is a terminal.
    ///   - passphrase: The passphrase already read, if any.
    ///   - capture: Where the output goes (the agent); nil: the process's own streams.
    ///   - vaults: The agent's pool of open vaults; nil outside the agent.
    ///   - failFast: The error to fail with at once instead of asking the Secret Service (the agent's silence window).
    ///   - client: The client, which runs a refresh command (the agent); nil: this process runs it.
    init(
        input: Result<SecretBytes, LatchkeyError>?, inputIsTerminal: Bool, passphrase: SecretBytes?,
        capture: Capture?, vaults: (any VaultSource)?, failingFastWith failFast: LatchkeyError? = nil,
        client: ClientRefresh? = nil
    ) {
        self.client = client
        self.input = Mutex(input)
        self.inputIsTerminal = inputIsTerminal
        self.passphrase = passphrase
        self.capture = capture
        self.vaults = vaults
        self.failFast = failFast
    }

    /// The process's own streams and input, nothing read yet.
    static func process() -> Execution {
        Execution(input: nil, inputIsTerminal: POSIX.isTerminal(0), passphrase: nil, capture: nil, vaults: nil)
    }

    /// Whether this is a command the agent runs for a client (its output is captured).
    var isInAgent: Bool { capture != nil }

    /// Standard input already read, once (later calls get it empty); nil when it is the process's own, not read yet.
    func takeInput() -> Result<SecretBytes, LatchkeyError>? {
        input.withLock { input in
            defer { if input != nil { input = .success(SecretBytes()) } }
            return input
        }
    }

    /// Writes `text` as UTF-8 (`write`), unbuffered.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    func write(_ text: String, to stream: Stream) throws {
        if let capture {
            capture.append(SecretBytes(utf8: text), to: stream)
        } else {
            try POSIX.write(text, toDescriptor: stream.descriptor, name: stream.name)
        }
    }

    /// Writes the bytes of a secret (`write`), without copying them elsewhere.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    func write(_ secret: SecretBytes, to stream: Stream) throws {
        if let capture {
            capture.append(secret, to: stream)
        } else {
            try POSIX.write(secret, toDescriptor: stream.descriptor, name: stream.name)
        }
    }

    /// Writes a message for the person on standard error.
    func message(_ text: String) {
        // Nothing sensible remains to be done when standard error cannot be written.
        try? write(text + "\n", to: .error)
    }
}

extension AgentOutputStream {
    /// Its descriptor in this process: 1 or 2.
    var descriptor: Int32 { self == .output ? 1 : 2 }
    /// Its name in messages.
    var name: String { self == .output ? "standard output" : "standard error" }
}

extension Execution {
    /// A command's standard output and error, kept in the order written, to be sent to the client.
    final class Capture: Sendable {
        private let pieces = Mutex<[(stream: Stream, bytes: SecretBytes)]>([])

        func append(_ bytes: SecretBytes, to stream: Stream) {
            pieces.withLock { $0.append((stream, bytes)) }
        }

        /// Takes everything written so far, in order.
        func take() -> [(stream: AgentOutputStream, bytes: SecretBytes)] {
            pieces.withLock { pieces in
                defer { pieces.removeAll() }
                return pieces
            }
        }
    }
}
