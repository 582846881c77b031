/// The bash, zsh and fish completion scripts, rendered from the one description
/// of the commands. Each script walks the words typed so far the same way: it
/// skips options (and the value of those that take one) up to `--`, takes the
/// first word as the command and, for a group such as `session`, the second
/// word too, and counts the words after them as arguments. Then it offers the
/// options of that command and the global ones, the next command word, or what
/// completes the argument or the option value at the cursor.
enum ShellCompletion {
    /// The shells `latchkey completion SHELL` writes a script for.
    static let shells = ["bash", "zsh", "fish"]

    /// The completion script for `shell`, or nil for a shell not in ``shells``.
    static func script(for shell: String) -> String? {
        switch shell {
        case "bash": bash
        case "zsh": zsh
        case "fish": fish
        default: nil
        }
    }

    /// A state of the walk: the command words read so far and how many arguments followed them.
    struct State {
        /// The command words, joined by a space (`""`, `session`, `session put`).
        let key: String
        /// What to offer at the cursor, as (word, description).
        let words: [(String, String)]
        /// What completes the argument at the cursor, when no word list applies.
        let completion: Completion
    }

    /// Every state that offers something for the next word (argument index 0).
    static var states: [State] {
        var states = [State(key: "", words: Command.groups.map { ($0, Tool.summary(ofGroup: $0)) }, completion: .none)]
        for group in groupsWithSubcommands {
            states.append(
                State(key: group, words: Command.group(group).map { ($0.words[1], $0.summary) }, completion: .none))
        }
        for command in Command.all {
            guard let argument = command.arguments.first, argument.completion != .none else { continue }
            states.append(
                State(key: command.name, words: words(of: argument.completion), completion: argument.completion))
        }
        return states
    }

    /// The first words that take a second one (`session`, `audit`, ...).
    static var groupsWithSubcommands: [String] {
        Command.groups.filter { Command.group($0).contains { $0.words.count > 1 } }
    }

    /// The walk in bash and zsh, which share its syntax: when the word before the
    /// cursor (`$option`) is an option that takes a value, offers what completes
    /// it and returns; else declares `key`, `word`, `i`, `count` and `ended`, then
    /// for each typed word before the cursor skips
    /// options (and with `skipValue` the value of those that take one) until
    /// `--`, reads command words into `$key` and counts arguments in `$count`.
    /// - Parameters:
    ///   - indent: The indentation of the function body.
    ///   - declare: The shell's declaration of the variables.
    ///   - from: The index of the first word after the tool's name.
    ///   - to: The variable holding the index of the word at the cursor.
    ///   - words: The array of the typed words.
    ///   - skipValue: The statements that step over an option's value.
    ///   - offer: The statements that offer what completes a value.
    /// - Returns: The lines.
    static func walk(
        indent: String, declare: String, from: String, to: String, words: String, skipValue: String,
        offer: (Completion) -> String
    ) -> [String] {
        let values = valuedOptions.map { "  \($0.names.joined(separator: "|"))) \(offer($0.completion)); return ;;" }
        return
            (["case $option in"] + values + ["esac"] + [
                declare,
                "for (( i = \(from); i < \(to); i++ )); do",
                "  word=${\(words)[i]}",
                "  if (( ! ended )); then",
                "    case $word in",
                "      --) ended=1; continue ;;",
                "      \(valuedOptionNames.joined(separator: "|"))) \(skipValue); continue ;;",
                "      -*) continue ;;",
                "    esac",
                "  fi",
                "  case $key in",
                "    '') key=$word ;;",
                "    \(groupsWithSubcommands.joined(separator: "|"))) key=\"$key $word\" ;;",
                "    *) (( count++ )) ;;",
                "  esac",
                "done",
            ]).map { indent + $0 }
    }

    /// What bash and zsh do after the walk: when the word at the cursor starts
    /// with `-` (and `--` was not typed), offer the global options and the
    /// command's own; else, at the command's first argument or the next command
    /// word, offer what the state offers.
    /// - Parameters:
    ///   - indent: The indentation of the function body.
    ///   - options: The statement that collects the global options.
    ///   - adding: The statement that adds a command's options.
    ///   - offerOptions: The statement that offers the options collected.
    ///   - stop: The statement that offers nothing past the first argument.
    ///   - offer: The statement that offers what a state offers.
    /// - Returns: The lines.
    static func dispatch(
        indent: String, options: String, adding: (Command) -> String, offerOptions: String, stop: String,
        offer: (State) -> String
    ) -> [String] {
        let commands = Command.all.filter { !$0.options.isEmpty }.map { "    \(quoted($0.name))) \(adding($0)) ;;" }
        let offers = states.map { "  \(quoted($0.key))) \(offer($0)) ;;" }
        let lines =
            ["if [[ $cur == -* ]] && (( ! ended )); then", "  " + options, "  case $key in"] + commands
            + ["  esac", "  " + offerOptions, "  return", "fi", "(( count == 0 )) || \(stop)", "case $key in"] + offers
            + ["esac"]
        return lines.map { indent + $0 }
    }

    /// Every name of every option that takes a value, global or a command's, once each.
    static var valuedOptionNames: [String] {
        var names: [String] = []
        for option in Tool.globalOptions + Command.all.flatMap(\.options) where option.takesValue {
            for name in option.names where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// Every option that takes a value, once per long name, for completing its value.
    static var valuedOptions: [Option] {
        var seen: [String] = []
        return (Tool.globalOptions + Command.all.flatMap(\.options)).filter { option in
            guard option.takesValue, !seen.contains(option.name) else { return false }
            seen.append(option.name)
            return true
        }
    }

    /// The words a completion offers as a list: choices, or the command names.
    static func words(of completion: Completion) -> [(String, String)] {
        switch completion {
        case .choices(let words): words.map { ($0, "") }
        case .command: Command.groups.map { ($0, Tool.summary(ofGroup: $0)) }
        case .file(let also): also.map { ($0, "") }
        case .none, .directory: []
        }
    }

    /// `text` in single quotes for bash, zsh and fish (a quote inside as `'\''`).
    static func quoted(_ text: String) -> String {
        "'" + text.replacing("'", with: #"'\''"#) + "'"
    }
}
