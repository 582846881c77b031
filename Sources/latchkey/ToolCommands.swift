import Latchkey

/// `help` and `version`: the commands about the tool itself, which never touch a store.
enum ToolCommands {
    /// `latchkey help [COMMAND [SUBCOMMAND]]`.
    static func help(_ context: Context, _ arguments: CommandArguments) throws {
        try showHelp(for: arguments.positionals, context.output)
    }

    /// The help for the command words `words` (the tool's when there are none):
    /// text on standard output, or with `--json` the document's `help` field.
    /// - Throws: `LatchkeyError` `.usage` when the words name no command, with the closest valid name.
    static func showHelp(for words: [String], _ output: Output) throws {
        let text: String
        let commands: [Command]
        if words.isEmpty {
            (text, commands) = (Help.tool, Command.all)
        } else if let command = try Command.resolve(words) {
            (text, commands) = (Help.command(command), [command])
        } else {
            (text, commands) = (Help.group(words[0]), Command.group(words[0]))
        }
        if output.json {
            output.set("help", Help.json(commands))
        } else {
            try CommandLineIO.write(text + "\n", to: .output)
        }
    }

    /// `latchkey version`, `--version`, `-V`.
    static func version(_ context: Context, _ arguments: CommandArguments) throws {
        try context.output.line("latchkey \(Tool.version)")
        context.output.set("latchkey", .string(Tool.version))
    }
}
