import Latchkey

/// Where a command's results go: lines of text on standard output, or, with
/// `--json`, fields of the one JSON document written when the command ends.
/// Messages to the person (errors, notes) go to standard error in both modes.
/// Everything goes to its ``StandardStreams``: the process's own, or, for a store command,
/// the output it returns as a value (``CapturedOutput``).
package final class Output {
    /// Whether the output is one JSON document (`--json`).
    package let json: Bool
    /// Where the output is written.
    package let streams: any StandardStreams
    private var fields: [(String, JSONOutput)] = [("version", .integer(1))]

    /// An output written to `streams`, as one JSON document when `json` is true.
    package init(json: Bool, streams: any StandardStreams) {
        self.json = json
        self.streams = streams
    }

    /// Writes a line of text (text mode only).
    package func line(_ text: String) throws {
        if !json { try streams.write(text + "\n", to: .output) }
    }

    /// Sets a field of the JSON document (JSON mode only has a document).
    /// In text mode `value` is not even built, so a command pays for no
    /// formatting (dates, say) that nobody will see.
    package func set(_ key: String, _ value: @autoclosure () -> JSONOutput) {
        guard json else { return }
        fields.removeAll { $0.0 == key }
        fields.append((key, value()))
    }

    /// Writes a secret the command exists to print: its bytes (and a newline
    /// unless `newline` is false) in text mode, the `key` field in JSON mode.
    package func secret(_ secret: SecretBytes, key: String, newline: Bool = true) throws {
        if json {
            set(key, .secret(secret))
        } else {
            try streams.write(secret, to: .output)
            if newline { try streams.write("\n", to: .output) }
        }
    }

    /// Writes bytes that follow a protocol (git's), in text mode only.
    package func raw(_ bytes: SecretBytes) throws {
        if !json { try streams.write(bytes, to: .output) }
    }

    /// Writes a message for the person on standard error.
    package func message(_ text: String) {
        streams.message(text)
    }

    /// Ends the command: in JSON mode, writes the document, with `error` when the command failed.
    package func finish(error: LatchkeyError?) throws {
        guard json else { return }
        if let error {
            set("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.description))]))
        }
        var pieces: [JSONOutput.Piece] = []
        try JSONOutput.object(fields).render(into: &pieces)
        pieces.append(.text("\n"))
        var text = ""
        for piece in pieces {
            switch piece {
            case .text(let more): text += more
            case .secret(let secret):
                try streams.write(text, to: .output)
                text = ""
                try streams.write(secret, to: .output)
            }
        }
        try streams.write(text, to: .output)
    }

    /// Ends a command that failed with `error`: the message, then `usage` for a usage error
    /// (exit 64) when given (the command line's usage line), then the JSON document with the error.
    /// - Returns: The exit status.
    package func fail(_ error: any Error, usage: ((LatchkeyError) -> String)? = nil) -> Int32 {
        let failure = (error as? LatchkeyError ?? LatchkeyError(.internal, "\(error)")).withCommandLineRemedy
        message("latchkey: \(failure)")
        if failure.code == .usage, let usage { message(usage(failure)) }
        do {
            try finish(error: failure)
        } catch {
            // The document with the result could not be written (a secret that is not
            // UTF-8, say): write one with the error alone.
            try? Output(json: true, streams: streams).finish(error: failure)
        }
        return failure.code.exitStatus
    }
}
