import Latchkey
import Synchronization

/// A standard stream a command writes to.
package enum StandardStream: Sendable {
    /// Standard output.
    case output
    /// Standard error.
    case error

    /// Its descriptor in a process: 1 or 2.
    package var descriptor: Int32 { self == .output ? 1 : 2 }
    /// Its name in messages.
    package var name: String { self == .output ? "standard output" : "standard error" }
}

/// Where a command's output goes: the process's own streams (the command line's), or pieces
/// kept in order (``CapturedOutput``), which a store command returns as its value. A secret is
/// written without being copied into a `String`.
package protocol StandardStreams: Sendable {
    /// Writes `text` as UTF-8.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    func write(_ text: String, to stream: StandardStream) throws
    /// Writes the bytes of a secret, without copying them elsewhere.
    /// - Throws: `LatchkeyError` `.io` when the write fails.
    func write(_ secret: SecretBytes, to stream: StandardStream) throws
}

extension StandardStreams {
    /// Writes a message for the person on standard error.
    package func message(_ text: String) {
        // Nothing sensible remains to be done when standard error cannot be written.
        try? write(text + "\n", to: .error)
    }
}

/// A command's standard output and error, kept in the order written: what a store command
/// gives back (``StoreRunResult/output``), for its client to write.
package final class CapturedOutput: StandardStreams {
    private let pieces = Mutex<[(stream: StandardStream, bytes: SecretBytes)]>([])

    /// An empty capture.
    package init() {}

    package func write(_ text: String, to stream: StandardStream) {
        pieces.withLock { $0.append((stream, SecretBytes(utf8: text))) }
    }

    package func write(_ secret: SecretBytes, to stream: StandardStream) {
        pieces.withLock { $0.append((stream, secret)) }
    }

    /// Takes everything written so far, in order.
    package func take() -> [(stream: StandardStream, bytes: SecretBytes)] {
        pieces.withLock { pieces in
            defer { pieces.removeAll() }
            return pieces
        }
    }
}
