import Latchkey
import LatchkeySystem

/// Reads secrets (passphrases, tokens) from where a command-line tool may take
/// them: a file descriptor, a file, or a no-echo terminal prompt. Never from
/// argv or the environment, where other processes can see them. Standard input
/// is the run's (``Execution``): the process's own, or what the client already read.
enum SecretInput {
    /// The largest secret accepted, so a wrong file cannot exhaust memory.
    static let maximumLength = 1 << 20

    /// Reads a command's secret from standard input: asks with `prompt` (no echo) on a
    /// terminal, else reads it up to its end, one trailing newline stripped.
    /// - Throws: `LatchkeyError` as ``readFromTerminal(prompt:_:)`` and ``read(fromDescriptor:stripOneTrailingNewline:_:)``.
    static func readStandardInput(prompt: String, _ execution: Execution) throws -> SecretBytes {
        if execution.inputIsTerminal { return try readFromTerminal(prompt: prompt, execution) }
        return try read(fromDescriptor: 0, execution)
    }

    /// Reads a secret from an open file descriptor, up to its end.
    /// - Parameters:
    ///   - descriptor: The descriptor, such as 0 for standard input or one
    ///     given with `--passphrase-fd`.
    ///   - stripOneTrailingNewline: Whether to drop one final `\n`, as shells add.
    ///   - execution: The run whose standard input descriptor 0 is.
    /// - Returns: The secret.
    /// - Throws: `LatchkeyError` `.invalidInput` when it is longer than
    ///   ``maximumLength``; `.io` when reading fails (`read`).
    static func read(
        fromDescriptor descriptor: Int32, stripOneTrailingNewline: Bool = true, _ execution: Execution
    ) throws -> SecretBytes {
        if descriptor == 0, let input = execution.takeInput() {
            let bytes = try input.get()
            return stripOneTrailingNewline ? droppingOneTrailingNewline(bytes) : bytes
        }
        let (secret, _) = try POSIX.readSecret(from: descriptor, limit: maximumLength, untilEnd: true)
        return stripOneTrailingNewline ? droppingOneTrailingNewline(secret) : secret
    }

    /// Reads the process's standard input to its end, as it is, for a command the agent runs.
    /// - Throws: `LatchkeyError` as ``read(fromDescriptor:stripOneTrailingNewline:_:)``.
    static func readInput(_ execution: Execution) throws(LatchkeyError) -> SecretBytes {
        do {
            return try read(fromDescriptor: 0, stripOneTrailingNewline: false, execution)
        } catch let error as LatchkeyError {
            throw error
        } catch {
            throw LatchkeyError(.io, "standard input: \(error)")
        }
    }

    /// Reads a secret from a file, which must be a private (0600) regular file
    /// of this user. One trailing newline is dropped.
    /// - Parameter path: The file.
    /// - Returns: The secret.
    /// - Throws: `LatchkeyError` `.notFound`, `.insecurePermissions` naming the
    ///   path, `.invalidInput` when too long, `.io`.
    static func read(fromFile path: String) throws -> SecretBytes {
        droppingOneTrailingNewline(try PrivateFiles.readSecret(atPath: path, limit: maximumLength))
    }

    /// Asks on the terminal: switches echo off (`tcsetattr`), then writes
    /// `prompt` to standard error, then reads one line from standard input, so
    /// nothing typed after the prompt appears is ever shown.
    /// - Parameters:
    ///   - prompt: What to ask, such as `Passphrase for com.example.notes: `.
    ///   - execution: The run, whose standard input is the terminal (never in the agent, which asks nothing).
    /// - Returns: The line without its newline.
    /// - Throws: `LatchkeyError` `.unavailable` when standard input is not a
    ///   terminal; `.invalidInput` when input ends before a line; `.io`.
    static func readFromTerminal(prompt: String, _ execution: Execution) throws -> SecretBytes {
        guard execution.inputIsTerminal else {
            throw LatchkeyError(.unavailable, "standard input is not a terminal, so no prompt can be shown")
        }
        let (secret, atEnd) = try POSIX.readSecretLineWithoutEcho(from: 0, limit: maximumLength, prompt: prompt)
        if atEnd { throw LatchkeyError(.invalidInput, "input ended before anything was entered") }
        return secret
    }

    /// `secret` without one final `\n`, as shells and editors add.
    private static func droppingOneTrailingNewline(_ secret: SecretBytes) -> SecretBytes {
        secret.withUnsafeBytes { bytes in
            bytes.last == UInt8(ascii: "\n") ? SecretBytes(UnsafeRawBufferPointer(rebasing: bytes.dropLast())) : secret
        }
    }
}
