/// An option of the `latchkey` command line as the one description of the
/// commands states it (``Tool/globalOptions``, ``Command/options``): the parser,
/// `--help`, the manual page and the shell completions all read it.
struct Option: Sendable {
    /// Its typed name, such as ``OptionKey/account``: what a command reads its value by.
    let key: OptionKey
    /// Its short name, such as `-n`, when it has one.
    var short: String? = nil
    /// The placeholder of its value, such as `A`; nil for an option that takes no value.
    var value: String? = nil
    /// What it does, in one sentence without a final full stop.
    let help: String
    /// What completes its value in a shell.
    var completion: Completion = .none

    /// Its long name, such as `--account`.
    var name: String { key.name }

    /// Whether it takes a value.
    var takesValue: Bool { value != nil }

    /// Every name it answers to: the long one, then the short one.
    var names: [String] { [name] + (short.map { [$0] } ?? []) }

    /// Its value as usage shows it: the choices when there are a few, else the placeholder.
    var valueText: String? {
        guard let value else { return nil }
        return completion.shownChoices ?? value
    }

    /// As the option lists show it: `-n, --no-newline`, `--account A`.
    var synopsis: String {
        (short.map { "\($0), " } ?? "") + name + (valueText.map { " \($0)" } ?? "")
    }

    /// As a usage line shows it: `[--account A]`.
    var usage: String { "[" + name + (valueText.map { " \($0)" } ?? "") + "]" }
}

/// The name of an option, declared once here and read by this typed key
/// (`arguments[.account]`, `arguments.has(.noNewline)`), so a misspelt option
/// name does not compile. ``Option`` describes each for the parser, the help,
/// the manual page and the completions.
struct OptionKey: Hashable, Sendable {
    /// Its long name, such as `--account`.
    let name: String

    private init(_ name: String) { self.name = name }

    // The global options (``Tool/globalOptions``).
    /// `--app ID`.
    static let app = OptionKey("--app")
    /// `--policy FILE`.
    static let policy = OptionKey("--policy")
    /// `--backend KIND`.
    static let backend = OptionKey("--backend")
    /// `--store-dir DIR`.
    static let storeDirectory = OptionKey("--store-dir")
    /// `--passphrase-fd N`.
    static let passphraseDescriptor = OptionKey("--passphrase-fd")
    /// `--passphrase-file PATH`.
    static let passphraseFile = OptionKey("--passphrase-file")
    /// `--json`.
    static let json = OptionKey("--json")
    /// `--help`, `-h`.
    static let help = OptionKey("--help")
    /// `--version`, `-V`.
    static let version = OptionKey("--version")

    // The commands' own options (``Command/all``).
    /// `--account A`.
    static let account = OptionKey("--account")
    /// `--expires-in DURATION`.
    static let expiresIn = OptionKey("--expires-in")
    /// `--grant`.
    static let grant = OptionKey("--grant")
    /// `--no-newline`, `-n`.
    static let noNewline = OptionKey("--no-newline")
    /// `--refresh-command CMD`.
    static let refreshCommand = OptionKey("--refresh-command")
    /// `--from-file PATH`.
    static let fromFile = OptionKey("--from-file")
    /// `--since SEQ`.
    static let since = OptionKey("--since")
    /// `--yes`.
    static let yes = OptionKey("--yes")
    /// `--secret-service`.
    static let secretService = OptionKey("--secret-service")
}

/// A positional argument of a command, such as `NAME` of `session put`.
struct Argument: Sendable {
    /// Its placeholder, such as `NAME`.
    let name: String
    /// Whether it may be left out.
    var optional = false
    /// What completes it in a shell.
    var completion: Completion = .none

    /// As a usage line shows it: the choices when there are a few, else the placeholder, in brackets when optional.
    var usage: String {
        let text = completion.shownChoices ?? name
        return optional ? "[\(text)]" : text
    }
}

/// What completes an option's value or an argument in the shell completions.
enum Completion: Sendable, Equatable {
    /// Free text: nothing to offer.
    case none
    /// A file name, and these words besides (such as `built-in:strict`).
    case file(also: [String] = [])
    /// A directory name.
    case directory
    /// One of these words.
    case choices([String])
    /// The name of a command (the first word).
    case command

    /// The choices as usage lines show them instead of a placeholder
    /// (`get|store|erase`), when they are few and short enough.
    var shownChoices: String? {
        guard case .choices(let words) = self else { return nil }
        let text = words.joined(separator: "|")
        return text.count <= 24 ? text : nil
    }
}

/// An exit status and what it means, for the help texts and the manual page.
struct ExitStatus: Sendable {
    /// The status, one of ``LatchkeyError/Code/exitStatusTable``'s values or 0.
    let status: Int32
    /// What it means, such as `not found`.
    let meaning: String
}

/// An environment variable the tool reads.
struct EnvironmentVariable: Sendable {
    /// Its name, such as `LATCHKEY_BACKEND`.
    let name: String
    /// What it sets.
    let help: String
}
