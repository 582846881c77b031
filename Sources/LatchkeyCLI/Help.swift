import LatchkeyCommands

/// The help texts (`--help`, `latchkey help`, text and JSON), rendered from the
/// one description of the commands so they cannot drift from it.
enum Help {
    /// The width text help is wrapped to.
    static let width = 80
    /// The column where descriptions start in option and command lists.
    private static let column = 28

    /// `latchkey --help` and `latchkey help`.
    static var tool: String {
        let commands = Command.all.map { ($0.synopsis, $0.summary) }
        return """
            latchkey \(Tool.version): \(Tool.summary).

            Usage: latchkey [global options] COMMAND [arguments]
                   git-credential-latchkey [global options] get|store|erase

            Commands:
            \(table(commands))

            \(globalOptionsText)

            \(environmentText)

            \(wrap("Secrets (tokens, passphrases) are read from standard input, a file descriptor or a no-echo prompt, never from arguments or the environment. `session get` prints the token followed by a newline (--no-newline: the bytes alone). Errors go to standard error as \"latchkey: <message>\"."))

            \(exitStatusText)

            `latchkey help COMMAND` or `latchkey COMMAND --help` describes one command;
            the manual page is latchkey(1).
            """
    }

    /// `latchkey help WORD` and `latchkey WORD --help`: every command named by `word`.
    static func group(_ word: String) -> String {
        describe(Command.group(word), word: word)
    }

    /// `latchkey help WORD SUBWORD` and `latchkey WORD SUBWORD --help`.
    static func command(_ command: Command) -> String {
        describe([command], word: command.words[0])
    }

    /// The usage lines of the commands named by `word`, or the tool's, for usage errors.
    static func usage(_ word: String?) -> String {
        let commands = Command.all.filter { $0.words[0] == word }
        guard !commands.isEmpty else {
            return "Usage: latchkey [global options] COMMAND [arguments] (see latchkey --help)"
        }
        return commands.map { "Usage: \($0.usage)" }.joined(separator: "\n")
    }

    /// The help as one JSON value: the commands given (all by default), the global
    /// options, the environment and the exit statuses.
    static func json(_ commands: [Command] = Command.all) -> JSONOutput {
        .object([
            ("tool", .string("latchkey")),
            ("summary", .string(Tool.summary)),
            ("commands", .array(commands.map(json))),
            ("globalOptions", .array(Tool.globalOptions.map(json))),
            (
                "environment",
                .array(Tool.environment.map { .object([("name", .string($0.name)), ("help", .string($0.help))]) })
            ),
            ("exitStatuses", .array(Tool.exitStatuses.map(json))),
        ])
    }

    private static func describe(_ commands: [Command], word: String) -> String {
        var parts = commands.map(text)
        if let extra = Tool.details[word] { parts.append(wrap(extra)) }
        return (parts + [globalOptionsText, exitStatusText]).joined(separator: "\n\n")
    }

    private static func text(_ command: Command) -> String {
        var rows = command.options.map { ($0.synopsis, $0.help) }
        rows += command.exits.map { ("exit \($0.status)", $0.meaning) }
        let lines =
            ["Usage: \(command.usage)", wrap(command.summary, indent: 2)]
            + (rows.isEmpty ? [] : [table(rows, indent: 4)])
        return lines.joined(separator: "\n")
    }

    private static var globalOptionsText: String {
        "Global options (anywhere on the line; -- ends the options):\n"
            + table(Tool.globalOptions.map { ($0.synopsis, $0.help) })
    }

    private static var environmentText: String {
        "Environment (a flag wins over it):\n" + table(Tool.environment.map { ($0.name, $0.help) })
    }

    private static var exitStatusText: String {
        "Exit status:\n" + table(Tool.exitStatuses.map { (String($0.status), $0.meaning) }, column: 8)
    }

    private static func json(_ command: Command) -> JSONOutput {
        .object([
            ("command", .string(command.name)),
            ("usage", .string(command.usage)),
            ("summary", .string(command.summary)),
            (
                "arguments",
                .array(
                    command.arguments.map { .object([("name", .string($0.name)), ("optional", .bool($0.optional))]) })
            ),
            ("options", .array(command.options.map(json))),
            ("readsStandardInput", .bool(command.readsStandardInput)),
            ("exitStatuses", .array(command.exits.map(json))),
            ("details", .string(Tool.details[command.words[0]])),
        ])
    }

    private static func json(_ option: Option) -> JSONOutput {
        .object([
            ("name", .string(option.name)), ("short", .string(option.short)), ("value", .string(option.valueText)),
            ("help", .string(option.help)),
        ])
    }

    private static func json(_ exit: ExitStatus) -> JSONOutput {
        .object([("status", .integer(Int64(exit.status))), ("meaning", .string(exit.meaning))])
    }

    /// Two columns: each name at `indent`, its description from `column` on, wrapped;
    /// a name too long for its column gets a line of its own.
    private static func table(_ rows: [(String, String)], indent: Int = 2, column: Int = column) -> String {
        let column = max(column, indent + 2)
        return rows.map { name, description in
            let lead = String(repeating: " ", count: indent) + name
            let body = wrap(description, indent: column)
            let first = body.dropFirst(column)
            guard lead.count < column - 1 else { return lead + "\n" + body }
            return lead + String(repeating: " ", count: column - lead.count) + first
        }.joined(separator: "\n")
    }

    /// `text` wrapped to ``width``, every line indented by `indent` spaces.
    static func wrap(_ text: String, indent: Int = 0) -> String {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && indent + line.count + 1 + word.count > width {
                lines.append(margin + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(margin + line)
        return lines.joined(separator: "\n")
    }
}
