import Latchkey
import LatchkeyCommands
import LatchkeySystem

/// This process's standard streams, which a command of the command line writes to (passed to
/// it explicitly, in the ``Context`` and the ``Output``; there is no ambient state), and
/// whether its standard input is a terminal, where the command line asks (a passphrase, a
/// confirmation). A store command runs in ``StoreCommandRunner`` and gives its output back as
/// a value, which is written here. Writes go through the library's POSIX wrappers, and a
/// secret is written without being copied into a `String`.
final class Execution: StandardStreams {
    /// Whether standard input is a terminal.
    let inputIsTerminal: Bool

    /// The streams of this process, whose standard input is a terminal or not.
    init(inputIsTerminal: Bool) {
        self.inputIsTerminal = inputIsTerminal
    }

    /// The process's own streams.
    static func process() -> Execution {
        Execution(inputIsTerminal: POSIX.isTerminal(0))
    }

    /// Writes `text` as UTF-8 (`write`), unbuffered.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    func write(_ text: String, to stream: StandardStream) throws {
        try POSIX.write(text, toDescriptor: stream.descriptor, name: stream.name)
    }

    /// Writes the bytes of a secret (`write`), without copying them elsewhere.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    func write(_ secret: SecretBytes, to stream: StandardStream) throws {
        try POSIX.write(secret, toDescriptor: stream.descriptor, name: stream.name)
    }
}
