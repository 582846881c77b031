import Latchkey
import LatchkeyCommands

/// The confirmation a destructive command asks for: `--yes`, or `yes` typed on a terminal.
enum Confirmation {
    /// Whether the user confirmed `question`.
    /// - Parameters:
    ///   - question: What to ask, ending in a question mark.
    ///   - refusal: Why `--yes` is needed when standard input is not a terminal.
    ///   - arguments: The command's arguments (`--yes` confirms at once).
    ///   - execution: The run, whose standard input and error ask.
    /// - Returns: Whether to go ahead.
    /// - Throws: `LatchkeyError` `.usage` when standard input is not a terminal
    ///   and `--yes` is missing; `.io` when the question cannot be written.
    static func confirmed(
        _ question: String, refusal: String, _ arguments: CommandArguments, _ execution: Execution
    ) throws -> Bool {
        if arguments.has(.yes) { return true }
        guard execution.inputIsTerminal else {
            throw LatchkeyError(
                .usage, "\(refusal); confirm with --yes (standard input is not a terminal, so it cannot ask)")
        }
        try execution.write("\(question) Type 'yes' to confirm: ", to: .error)
        return readLine() == "yes"
    }
}
