import Latchkey

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

    /// Writes `text` as UTF-8 (`write`), unbuffered.
    /// - Parameters:
    ///   - text: The text.
    ///   - stream: Where to write it.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    static func write(_ text: String, to stream: Stream) throws {
        try POSIX.write(text, toDescriptor: stream.descriptor, name: stream.name)
    }

    /// Writes the bytes of a secret (`write`), without copying them elsewhere.
    /// - Parameters:
    ///   - secret: The secret.
    ///   - stream: Where to write it.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    static func write(_ secret: SecretBytes, to stream: Stream) throws {
        try POSIX.write(secret, toDescriptor: stream.descriptor, name: stream.name)
    }

    /// Whether `stream` is a terminal (`isatty`).
    /// - Parameter stream: The stream.
    /// - Returns: Whether a person is likely reading it.
    static func isTerminal(_ stream: Stream) -> Bool {
        POSIX.isTerminal(stream.descriptor)
    }

    /// Ends the process with `status` (`exit`).
    /// - Parameter status: The exit status, such as `LatchkeyError.Code.exitStatus`.
    static func exit(status: Int32) -> Never {
        POSIX.exitProcess(status)
    }
}
