/// The standard streams and the exit of a command-line tool, so that a tool
/// built on Latchkey (the `latchkey` command is one) needs no C call of its
/// own, and can write a secret it exists to print without copying it into a
/// `String`. The input side is ``SecretInput``.
public enum CommandLineIO {
    /// A standard stream a tool writes to.
    public enum Stream: Sendable {
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
    public static func write(_ text: String, to stream: Stream) throws {
        var text = text
        try text.withUTF8 { try POSIX.writeAll(UnsafeRawBufferPointer($0), to: stream.descriptor, name: stream.name) }
    }

    /// Writes the bytes of a secret (`write`), without copying them elsewhere.
    /// - Parameters:
    ///   - secret: The secret.
    ///   - stream: Where to write it.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    public static func write(_ secret: SecretBytes, to stream: Stream) throws {
        try secret.withUnsafeBytes { try POSIX.writeAll($0, to: stream.descriptor, name: stream.name) }
    }

    /// Whether `stream` is a terminal (`isatty`).
    /// - Parameter stream: The stream.
    /// - Returns: Whether a person is likely reading it.
    public static func isTerminal(_ stream: Stream) -> Bool {
        POSIX.isTerminal(stream.descriptor)
    }

    /// Ends the process with `status` (`exit`).
    /// - Parameter status: The exit status, such as `LatchkeyError.Code.exitStatus`.
    public static func exit(status: Int32) -> Never {
        POSIX.exitProcess(status)
    }
}
