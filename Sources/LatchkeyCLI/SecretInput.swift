import Latchkey
import LatchkeyCommands
import LatchkeySystem

/// Reads secrets (passphrases, tokens) from where a command-line tool may take
/// them: a file descriptor, a file, or a no-echo terminal prompt. Never from
/// argv or the environment, where other processes can see them.
enum SecretInput {
    /// Reads a secret from an open file descriptor, up to its end.
    /// - Parameters:
    ///   - descriptor: The descriptor, such as 0 for standard input or one
    ///     given with `--passphrase-fd`.
    ///   - stripOneTrailingNewline: Whether to drop one final `\n`, as shells add.
    /// - Returns: The secret.
    /// - Throws: `LatchkeyError` `.invalidInput` when it is longer than
    ///   ``SecretFile/maximumLength``; `.io` when reading fails (`read`).
    static func read(fromDescriptor descriptor: Int32, stripOneTrailingNewline: Bool = true) throws -> SecretBytes {
        let (secret, _) = try POSIX.readSecret(from: descriptor, limit: SecretFile.maximumLength, untilEnd: true)
        return stripOneTrailingNewline ? SecretFile.droppingOneTrailingNewline(secret) : secret
    }

    /// Reads the process's standard input to its end, as it is, for a store command.
    /// - Throws: `LatchkeyError` as ``read(fromDescriptor:stripOneTrailingNewline:)``.
    static func readInput() throws(LatchkeyError) -> SecretBytes {
        do {
            return try read(fromDescriptor: 0, stripOneTrailingNewline: false)
        } catch let error as LatchkeyError {
            throw error
        } catch {
            throw LatchkeyError(.io, "standard input: \(error)")
        }
    }

    /// Reads a secret from a file, which must be a private (0600) regular file
    /// of this user. One trailing newline is dropped.
    /// - Throws: As ``SecretFile/read(atPath:)``.
    static func read(fromFile path: String) throws -> SecretBytes {
        try SecretFile.read(atPath: path)
    }

    /// Asks on the terminal: switches echo off (`tcsetattr`), then writes
    /// `prompt` to standard error, then reads one line from standard input, so
    /// nothing typed after the prompt appears is ever shown.
    /// - Parameters:
    ///   - prompt: What to ask, such as `Passphrase for com.example.notes: `.
    ///   - execution: This process's streams, whose standard input is the terminal.
    /// - Returns: The line without its newline.
    /// - Throws: `LatchkeyError` `.unavailable` when standard input is not a
    ///   terminal; `.invalidInput` when input ends before a line; `.io`.
    static func readFromTerminal(prompt: String, _ execution: Execution) throws -> SecretBytes {
        guard execution.inputIsTerminal else {
            throw LatchkeyError(.unavailable, "standard input is not a terminal, so no prompt can be shown")
        }
        let (secret, atEnd) = try POSIX.readSecretLineWithoutEcho(
            from: 0, limit: SecretFile.maximumLength, prompt: prompt)
        if atEnd { throw LatchkeyError(.invalidInput, "input ended before anything was entered") }
        return secret
    }
}
