import Latchkey

/// Where a command's results go: lines of text on standard output, or, with
/// `--json`, fields of the one JSON document written when the command ends.
/// Messages to the person (prompts, errors) go to standard error in both modes.
/// Everything goes to the streams of the run's ``Execution``.
final class Output {
    let json: Bool
    /// What the command runs against: where its streams go.
    let execution: Execution
    private var fields: [(String, JSONOutput)] = [("version", .integer(1))]

    init(json: Bool, execution: Execution) {
        self.json = json
        self.execution = execution
    }

    /// Writes a line of text (text mode only).
    func line(_ text: String) throws {
        if !json { try execution.write(text + "\n", to: .output) }
    }

    /// Sets a field of the JSON document (JSON mode only has a document).
    /// In text mode `value` is not even built, so a command pays for no
    /// formatting (dates, say) that nobody will see.
    func set(_ key: String, _ value: @autoclosure () -> JSONOutput) {
        guard json else { return }
        fields.removeAll { $0.0 == key }
        fields.append((key, value()))
    }

    /// Writes a secret the command exists to print: its bytes (and a newline
    /// unless `newline` is false) in text mode, the `key` field in JSON mode.
    func secret(_ secret: SecretBytes, key: String, newline: Bool = true) throws {
        if json {
            set(key, .secret(secret))
        } else {
            try execution.write(secret, to: .output)
            if newline { try execution.write("\n", to: .output) }
        }
    }

    /// Writes bytes that follow a protocol (git's), in text mode only.
    func raw(_ bytes: SecretBytes) throws {
        if !json { try execution.write(bytes, to: .output) }
    }

    /// Writes a message for the person on standard error.
    func message(_ text: String) {
        execution.message(text)
    }

    /// Ends the command: in JSON mode, writes the document, with `error` when the command failed.
    func finish(error: LatchkeyError?) throws {
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
                try execution.write(text, to: .output)
                text = ""
                try execution.write(secret, to: .output)
            }
        }
        try execution.write(text, to: .output)
    }
}
