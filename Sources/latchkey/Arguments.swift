import Latchkey

/// The options that come before the command.
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

    /// The options with a value, as written on the command line.
    static let valued = ["--app", "--policy", "--backend", "--store-dir", "--passphrase-fd", "--passphrase-file"]

    /// Reads the global options at the front of `arguments`, leaving the command and its arguments.
    /// - Throws: `LatchkeyError` `.usage` for an unknown option or a bad value.
    static func parse(_ arguments: inout ArraySlice<String>) throws -> GlobalOptions {
        var options = GlobalOptions()
        while let argument = arguments.first, argument.hasPrefix("-") {
            arguments.removeFirst()
            if argument == "--" { break }
            let (name, inline) = splitOption(argument)
            if GlobalOptions.valued.contains(name) {
                try options.set(name, try value(of: name, inline: inline, from: &arguments))
                continue
            }
            guard inline == nil else { throw LatchkeyError(.usage, "option \(name) takes no value") }
            switch name {
            case "--json": options.json = true
            case "--help", "-h": options.help = true
            case "--version": options.version = true
            default: throw LatchkeyError(.usage, "unknown option \(name)")
            }
        }
        if options.passphraseDescriptor != nil && options.passphraseFile != nil {
            throw LatchkeyError(.usage, "give either --passphrase-fd or --passphrase-file, not both")
        }
        return options
    }

    private mutating func set(_ name: String, _ value: String) throws {
        switch name {
        case "--app": app = value
        case "--policy": policy = value
        case "--store-dir": storeDirectory = value
        case "--passphrase-file": passphraseFile = value
        case "--backend":
            guard let choice = Policy.BackendChoice(rawValue: value) else {
                throw LatchkeyError(.usage, "--backend must be auto, secret-service or file, not '\(value)'")
            }
            backend = choice
        default:
            guard let descriptor = Int32(value), descriptor >= 0 else {
                throw LatchkeyError(.usage, "--passphrase-fd needs a file descriptor number, not '\(value)'")
            }
            passphraseDescriptor = descriptor
        }
    }
}

/// A command's own arguments, once its options are taken out.
struct CommandArguments {
    var positionals: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    /// Splits `arguments` into positionals, options with a value and flags.
    /// `--json` and `--help` are accepted anywhere and set the global options.
    /// - Throws: `LatchkeyError` `.usage` for an option the command does not take.
    static func parse(_ arguments: ArraySlice<String>, options valued: [String], flags: [String],
                      globals: inout GlobalOptions) throws -> CommandArguments {
        var result = CommandArguments()
        var rest = arguments
        var onlyPositionals = false
        while let argument = rest.popFirst() {
            guard !onlyPositionals, argument.hasPrefix("-"), argument != "-" else {
                result.positionals.append(argument)
                continue
            }
            let (name, inline) = splitOption(argument)
            if name == "--" { onlyPositionals = true; continue }
            if valued.contains(name) {
                result.options[name] = try value(of: name, inline: inline, from: &rest)
                continue
            }
            guard inline == nil else { throw LatchkeyError(.usage, "option \(name) takes no value") }
            switch name {
            case "--json": globals.json = true
            case "--help", "-h": globals.help = true
            case _ where flags.contains(name): result.flags.insert(name)
            default:
                if GlobalOptions.valued.contains(name) {
                    throw LatchkeyError(.usage, "\(name) is a global option: give it before the command")
                }
                throw LatchkeyError(.usage, "unknown option \(name)")
            }
        }
        return result
    }

    /// The value of an integer option, if given.
    func integer(_ name: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let text = options[name] else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw LatchkeyError(.usage, "\(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }
}

/// `--name=value` as (`--name`, `value`); `--name` as (`--name`, nil).
private func splitOption(_ argument: String) -> (String, String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
}

/// The value of option `name`: the inline one, or the next argument.
private func value(of name: String, inline: String?, from arguments: inout ArraySlice<String>) throws -> String {
    if let inline { return inline }
    guard let next = arguments.popFirst() else { throw LatchkeyError(.usage, "option \(name) needs a value") }
    return next
}
