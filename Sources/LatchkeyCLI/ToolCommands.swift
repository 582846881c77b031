import Latchkey
import LatchkeyCommands

/// `help`, `version`, `completion` and `manpage`: the commands about the tool
/// itself, which never touch a store.
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
            try output.streams.write(text + "\n", to: .output)
        }
    }

    /// `latchkey version`, `--version`, `-V`.
    static func version(_ context: Context, _ arguments: CommandArguments) throws {
        try context.output.line("latchkey \(Tool.version)")
        context.output.set("latchkey", .string(Tool.version))
    }

    /// `latchkey completion bash|zsh|fish`.
    static func completion(_ context: Context, _ arguments: CommandArguments) throws {
        let shell = arguments.positionals[0]
        guard let script = ShellCompletion.script(for: shell) else {
            throw LatchkeyError(
                .usage,
                "completion takes \(ShellCompletion.shells.joined(separator: ", ")), not '\(shell)'"
                    + Suggestion.didYouMean(shell, among: ShellCompletion.shells))
        }
        try emit(script, key: "completion", context.output)
    }

    /// `latchkey manpage [PAGE]`.
    static func manualPage(_ context: Context, _ arguments: CommandArguments) throws {
        let page = arguments.positionals.first ?? "latchkey"
        guard Tool.manualPages.contains(page) else {
            throw LatchkeyError(
                .usage,
                "there is no manual page '\(page)' (\(Tool.manualPages.joined(separator: ", ")))"
                    + Suggestion.didYouMean(page, among: Tool.manualPages))
        }
        try emit(page == "latchkey" ? ManualPage.roff : ManualPage.pointer, key: "manpage", context.output)
    }

    /// Writes a generated file: as it is in text mode, as the field `key` with `--json`.
    private static func emit(_ text: String, key: String, _ output: Output) throws {
        if output.json {
            output.set(key, .string(text))
        } else {
            try output.streams.write(text, to: .output)
        }
    }
}
