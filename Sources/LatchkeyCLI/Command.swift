import Latchkey
import LatchkeyCommands

/// One command of the `latchkey` tool as the one description of the commands
/// states it (``Command/all``): its words, arguments, options, help text and
/// exit statuses, and what it does.
struct Command: Sendable {
    /// The words that name it, such as `["session", "put"]`.
    let words: [String]
    /// Its positional arguments, in order; the optional ones last.
    var arguments: [Argument] = []
    /// What it does, in one line without a final full stop.
    let summary: String
    /// Its own options (the global ones are ``Tool/globalOptions``).
    var options: [Option] = []
    /// Whether it reads data from standard input.
    var readsStandardInput = false
    /// The exit statuses besides 0 that it has reasons of its own for.
    var exits: [ExitStatus] = []
    /// Whether its group's first word alone runs it (`latchkey agent` is `latchkey agent run`).
    var isGroupDefault = false
    /// Runs it (a command that uses no store).
    var run: (@Sendable (Context, CommandArguments) throws -> Void)? = nil
    /// What its line parses into, for a command that uses a store: the value that runs in this
    /// process or in the agent when one answers (``StoreCommands``, ``AgentOffer``).
    var store: (@Sendable (Context, CommandArguments) throws -> StoreCommand)? = nil

    /// Its words as one string, such as `session put`.
    var name: String { words.joined(separator: " ") }

    /// Its words, arguments and options as usage lines show them, without the tool's name.
    var synopsis: String {
        (words + arguments.map(\.usage) + options.map(\.usage)).joined(separator: " ")
    }

    /// The usage line.
    var usage: String { "latchkey [global options] " + synopsis }

    /// How many arguments it needs at least.
    var requiredArguments: Int { arguments.filter { !$0.optional }.count }

    /// Its option answering to `name` (long or short).
    func option(named name: String) -> Option? {
        options.first { $0.names.contains(name) }
    }

    /// The first words of the commands, in the order `--help` lists them, once each.
    static var groups: [String] {
        var seen: [String] = []
        for command in all where !seen.contains(command.words[0]) { seen.append(command.words[0]) }
        return seen
    }

    /// The commands whose first word is `word`.
    static func group(_ word: String) -> [Command] {
        all.filter { $0.words[0] == word }
    }

    /// The command named by `words`, or nil while `words` names a group that needs one more word.
    /// - Parameter words: One or two words, as typed.
    /// - Returns: The command, or nil for a group such as `session` alone.
    /// - Throws: `LatchkeyError` `.usage` when the words name no command, with the closest valid name.
    static func resolve(_ words: [String]) throws -> Command? {
        let commands = group(words[0])
        guard !commands.isEmpty else {
            throw LatchkeyError(
                .usage, "unknown command '\(words[0])'" + Suggestion.didYouMean(words[0], among: groups))
        }
        if commands.count == 1 && commands[0].words.count == 1 { return commands[0] }
        guard words.count > 1 else { return nil }
        if let command = commands.first(where: { $0.words[1] == words[1] }) { return command }
        let choices = commands.map { $0.words[1] }
        throw LatchkeyError(
            .usage,
            "unknown command '\(words[0]) \(words[1])': \(words[0]) takes \(choices.joined(separator: ", "))"
                + Suggestion.didYouMean(words[1], among: choices, showing: { "\(words[0]) \($0)" }))
    }
}
