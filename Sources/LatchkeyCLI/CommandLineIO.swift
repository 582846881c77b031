import Latchkey
import Synchronization

/// The standard streams and the exit of the `latchkey` command, through the
/// library's POSIX wrappers (so this target makes no C call of its own), able
/// to write a secret it exists to print without copying it into a `String`.
/// The input side is ``SecretInput``.
enum CommandLineIO {
    /// A standard stream a tool writes to.
    enum Stream: Sendable {
        /// Standard output (descriptor 1).
        case output
        /// Standard error (descriptor 2).
        case error

        var descriptor: Int32 { self == .output ? 1 : 2 }
        var name: String { self == .output ? "standard output" : "standard error" }
    }

    /// The streams of the command running on this task, when they are not the
    /// process's own: a request the agent runs for a client, or a command the
    /// client runs in-process after it already read its input.
    @TaskLocal static var redirection: Redirection?

    /// Writes `text` as UTF-8 (`write`), unbuffered.
    /// - Parameters:
    ///   - text: The text.
    ///   - stream: Where to write it.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    static func write(_ text: String, to stream: Stream) throws {
        if let capture = redirection?.capture {
            capture.append(SecretBytes(utf8: text), to: stream)
        } else {
            try POSIX.write(text, toDescriptor: stream.descriptor, name: stream.name)
        }
    }

    /// Writes the bytes of a secret (`write`), without copying them elsewhere.
    /// - Parameters:
    ///   - secret: The secret.
    ///   - stream: Where to write it.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    static func write(_ secret: SecretBytes, to stream: Stream) throws {
        if let capture = redirection?.capture {
            capture.append(secret, to: stream)
        } else {
            try POSIX.write(secret, toDescriptor: stream.descriptor, name: stream.name)
        }
    }

    /// Ends the process with `status` (`exit`).
    /// - Parameter status: The exit status, such as `LatchkeyError.Code.exitStatus`.
    static func exit(status: Int32) -> Never {
        POSIX.exitProcess(status)
    }
}

extension CommandLineIO {
    /// Standard input already read to its end, and where the output goes.
    final class Redirection: Sendable {
        /// Standard input, already read, or why it could not be (nil: the process's own).
        let input: Mutex<Result<SecretBytes, LatchkeyError>?>
        /// Whether the client's standard input is a terminal.
        let inputIsTerminal: Bool
        /// The passphrase the client read or asked for, if any.
        let passphrase: SecretBytes?
        /// Where the output goes when it is sent back to a client (the agent); nil: the process's own streams.
        let capture: Capture?
        /// What the agent knows of unlocked vaults; nil outside the agent.
        let unlocked: UnlockCache?
        /// The prompt to show when the command needed a passphrase the agent does not hold.
        let passphraseNeeded = Mutex<String?>(nil)

        init(
            input: Result<SecretBytes, LatchkeyError>?, inputIsTerminal: Bool, passphrase: SecretBytes?,
            capture: Capture?, unlocked: UnlockCache?
        ) {
            self.input = Mutex(input)
            self.inputIsTerminal = inputIsTerminal
            self.passphrase = passphrase
            self.capture = capture
            self.unlocked = unlocked
        }
    }

    /// A command's standard output and error, kept in the order written, to be sent to the client.
    final class Capture: Sendable {
        private let pieces = Mutex<[(stream: Stream, bytes: SecretBytes)]>([])

        func append(_ bytes: SecretBytes, to stream: Stream) {
            pieces.withLock { $0.append((stream, bytes)) }
        }

        /// Takes everything written so far, in order, as pieces of at most `chunk` bytes each.
        func take(inPiecesOf chunk: Int) -> [(stream: Stream, bytes: SecretBytes)] {
            let taken = pieces.withLock { pieces in
                defer { pieces.removeAll() }
                return pieces
            }
            return taken.flatMap { piece -> [(stream: Stream, bytes: SecretBytes)] in
                guard piece.bytes.count > chunk else { return [piece] }
                return piece.bytes.withUnsafeBytes { bytes in
                    stride(from: 0, to: bytes.count, by: chunk).map { start in
                        let range = start..<min(start + chunk, bytes.count)
                        return (piece.stream, SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[range])))
                    }
                }
            }
        }
    }
}
