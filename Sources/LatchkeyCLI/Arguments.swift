import Latchkey
import LatchkeyCommands
import LatchkeySystem

/// The global options (``Tool/globalOptions``), wherever they were on the line.
struct GlobalOptions {
    var app: String?
    var policy: String?
    var backend: Policy.BackendChoice?
    var storeDirectory: String?
    var passphraseDescriptor: Int32?
    var passphraseFile: String?
    var json = false
    var help = false
    var version = false

    /// Sets the global option `option` (a flag when `value` is nil).
    /// - Throws: `LatchkeyError` `.usage` for a bad value.
    mutating func set(_ option: Option, _ value: String?) throws {
        switch option.key {
        case .app: app = value
        case .policy: policy = value
        case .storeDirectory: storeDirectory = value
        case .passphraseFile: passphraseFile = value
        case .backend: backend = try GlobalOptions.backendChoice(value ?? "", from: "--backend")
        case .passphraseDescriptor:
            guard let descriptor = value.flatMap({ Int32($0) }), descriptor >= 0 else {
                throw LatchkeyError(.usage, "--passphrase-fd needs a file descriptor number, not '\(value ?? "")'")
            }
            passphraseDescriptor = descriptor
        case .json: json = true
        case .help: help = true
        default: version = true
        }
    }

    /// `text` as a backend choice.
    /// - Parameters:
    ///   - text: `auto`, `secret-service` or `file`.
    ///   - origin: Where it was given (`--backend`, `LATCHKEY_BACKEND`), named in the error.
    /// - Throws: `LatchkeyError` `.usage` for anything else.
    static func backendChoice(_ text: String, from origin: String) throws -> Policy.BackendChoice {
        guard let choice = Policy.BackendChoice(rawValue: text) else {
            let choices = Policy.BackendChoice.allCases.map(\.rawValue)
            throw LatchkeyError(
                .usage,
                "\(origin) must be \(choices.joined(separator: ", ")), not '\(text)'"
                    + Suggestion.didYouMean(text, among: choices))
        }
        return choice
    }
}

/// A command's own arguments, once its options are taken out. Options are read
/// by their typed key (``OptionKey``): `arguments[.account]`, `arguments.has(.yes)`.
struct CommandArguments {
    /// The positional arguments, in order.
    var positionals: [String] = []
    /// The options given with a value.
    private var values: [OptionKey: String] = [:]
    /// The options given without a value.
    private var flags: Set<OptionKey> = []

    /// The value given to the option `key`, if it was given.
    subscript(key: OptionKey) -> String? { values[key] }

    /// Whether the option `key`, one that takes no value, was given.
    func has(_ key: OptionKey) -> Bool { flags.contains(key) }

    /// Takes the option `key` with its value (nil: one that takes no value).
    mutating func take(_ key: OptionKey, _ value: String?) {
        if let value { values[key] = value } else { flags.insert(key) }
    }

    /// The value of an integer option, if given.
    /// - Throws: `LatchkeyError` `.usage` when it is not a whole number in `range`.
    func integer(_ key: OptionKey, in range: ClosedRange<Int64>) throws -> Int64? {
        let name = key.name
        guard let text = values[key] else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw LatchkeyError(
                .usage, "\(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// The value of a duration option (``Lifetime``), in seconds, if given.
    /// - Throws: `LatchkeyError` `.usage` when it is not a duration in `range`.
    func duration(_ key: OptionKey, in range: ClosedRange<Int64>) throws -> Int64? {
        let name = key.name
        guard let text = values[key] else { return nil }
        guard let seconds = Lifetime.seconds(text), range.contains(seconds) else {
            throw LatchkeyError(
                .usage,
                "\(name) needs seconds or a duration such as 90s, 30m, 12h, 7d or 1h30m, "
                    + "from \(range.lowerBound) to \(range.upperBound) seconds, not '\(text)'")
        }
        return seconds
    }
}

/// One command line, parsed against the one description of the commands:
/// global options anywhere, before or after the command; the command's own
/// options after its first word; `--` ends the options.
struct Invocation {
    /// The global options.
    var globals = GlobalOptions()
    /// The command words read so far (one or two), so an error can show their usage.
    var words: [String] = []
    /// The command, once its words are read.
    var command: Command?
    /// The command's arguments and options.
    var arguments = CommandArguments()

    /// Every command option of any command, for options given before the command's words.
    private static let commandOptions = Command.all.flatMap(\.options)

    /// Reads `line` (the arguments after the tool's name).
    /// - Parameters:
    ///   - line: The arguments.
    ///   - notUTF8: The indices of `line` whose bytes were not valid UTF-8 (and so
    ///     hold a stand-in); naming, never using, what they were given for.
    /// - Throws: `LatchkeyError` `.usage` for an unknown command or option (with
    ///   the closest valid name), a missing value, an option the command does not
    ///   take, or an argument in `notUTF8` (naming the option or argument).
    mutating func parse(_ line: ArraySlice<String>, notUTF8: Set<Int> = []) throws {
        var rest = line
        var optionsEnded = false
        var early: [(Option, String?)] = []
        while let argument = rest.popFirst() {
            let position = rest.startIndex - 1
            guard optionsEnded || !argument.hasPrefix("-") || argument == "-" else {
                if argument == "--" {
                    optionsEnded = true
                    continue
                }
                let (name, inline) = splitOption(argument)
                /// The option's value, refused when it was not UTF-8.
                func optionValue(_ option: Option) throws -> String? {
                    let value = try value(of: option, inline: inline, from: &rest)
                    if !notUTF8.isDisjoint(with: position..<rest.startIndex) {
                        throw Invocation.notUTF8("the value of \(option.name)")
                    }
                    return value
                }
                if let option = Tool.globalOptions.first(where: { $0.names.contains(name) }) {
                    try globals.set(option, try optionValue(option))
                } else if let command, let option = command.option(named: name) {
                    take(option, try optionValue(option))
                } else if command == nil,
                    let option = Invocation.commandOptions.first(where: { $0.names.contains(name) })
                {
                    early.append((option, try optionValue(option)))
                } else {
                    throw notUTF8.contains(position) ? Invocation.notUTF8("an option") : unknownOption(name)
                }
                continue
            }
            if let command {
                if notUTF8.contains(position) {
                    let index = arguments.positionals.count
                    throw Invocation.notUTF8(
                        index < command.arguments.count
                            ? "the \(command.arguments[index].name) argument" : "argument \(index + 1)")
                }
                arguments.positionals.append(argument)
                continue
            }
            if notUTF8.contains(position) { throw Invocation.notUTF8("the command") }
            words.append(argument)
            command = try Command.resolve(words)
        }
        if command == nil, words.count == 1, let fallback = Command.group(words[0]).first(where: \.isGroupDefault) {
            command = fallback
        }
        guard let command else { return }
        for (option, value) in early {
            guard command.option(named: option.name) != nil else {
                throw LatchkeyError(.usage, "\(command.name) takes no option \(option.name)")
            }
            take(option, value)
        }
    }

    /// The command the line names.
    /// - Throws: `LatchkeyError` `.usage` when it names none, or only a group such as `session`.
    func resolvedCommand() throws -> Command {
        if let command { return command }
        guard let group = words.first else { throw LatchkeyError(.usage, "no command given") }
        let choices = Command.group(group).map { $0.words[1] }
        throw LatchkeyError(.usage, "'\(group)' needs a command: one of \(choices.joined(separator: ", "))")
    }

    /// Checks the number of positional arguments against the command's.
    /// - Throws: `LatchkeyError` `.usage` naming what is missing or unexpected.
    func checkArgumentCount() throws {
        guard let command else { return }
        let count = arguments.positionals.count
        if count < command.requiredArguments {
            let missing = command.arguments.prefix(command.requiredArguments).map(\.usage).joined(separator: " ")
            throw LatchkeyError(.usage, "\(command.name) needs \(missing)")
        }
        if count > command.arguments.count {
            // Not quoted: the extra argument may be a username or an account.
            let extra = count - command.arguments.count
            throw LatchkeyError(
                .usage,
                "\(command.name) takes \(command.arguments.count) argument\(command.arguments.count == 1 ? "" : "s"); \(extra) more \(extra == 1 ? "was" : "were") given"
            )
        }
    }

    /// The error for an argument whose bytes are not valid UTF-8: refused, never
    /// changed into other text (two different names would become one).
    static func notUTF8(_ what: String) -> LatchkeyError {
        LatchkeyError(
            .usage,
            "\(what) is not valid UTF-8; names, accounts, app ids and paths must be, and are never changed into other text"
        )
    }

    private mutating func take(_ option: Option, _ value: String?) {
        arguments.take(option.key, value)
    }

    /// An unknown option's error, with the closest name the command line takes here.
    private func unknownOption(_ name: String) -> LatchkeyError {
        let candidates = (Tool.globalOptions + (command?.options ?? Invocation.commandOptions)).map(\.name)
        let elsewhere = command == nil ? [] : Command.all.filter { $0.option(named: name) != nil }.map(\.name)
        let hint =
            elsewhere.isEmpty
            ? "" : " (\(elsewhere.joined(separator: ", ")) \(elsewhere.count == 1 ? "takes" : "take") it)"
        return LatchkeyError(
            .usage,
            "unknown option \(name)" + (command.map { " for \($0.name)" } ?? "") + hint
                + Suggestion.didYouMean(name, among: candidates))
    }
}

/// `--name=value` as (`--name`, `value`); `--name` as (`--name`, nil).
private func splitOption(_ argument: String) -> (String, String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
}

/// The value of `option`: the inline one or the next argument; nil for an option that takes none.
/// - Throws: `LatchkeyError` `.usage` when a value is missing, or given to an option that takes none.
private func value(of option: Option, inline: String?, from arguments: inout ArraySlice<String>) throws -> String? {
    guard option.takesValue else {
        guard inline == nil else { throw LatchkeyError(.usage, "option \(option.name) takes no value") }
        return nil
    }
    if let inline { return inline }
    guard let next = arguments.popFirst() else { throw LatchkeyError(.usage, "option \(option.name) needs a value") }
    return next
}
