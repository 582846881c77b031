import Latchkey

/// One command of the `latchkey` tool: its words, what it takes, and what it does.
struct Command: Sendable {
    /// The words that name it, such as `["session", "put"]`.
    let words: [String]
    /// Its arguments after the words, as shown in usage lines.
    let arguments: String
    /// One line saying what it does.
    let summary: String
    /// How many positional arguments it takes.
    var positionals = 0
    /// Its options that take a value.
    var options: [String] = []
    /// Its options that take none.
    var flags: [String] = []
    /// Whether it reads data from standard input.
    var readsStandardInput = false
    /// Runs it.
    let run: @Sendable (Context, CommandArguments) throws -> Void

    /// The usage line.
    var usage: String {
        "latchkey [global options] " + (words + (arguments.isEmpty ? [] : [arguments])).joined(separator: " ")
    }

    /// Every command, in the order `--help` lists them.
    static let all: [Command] = [
        Command(words: ["status"], arguments: "", summary: "show the store in use and why, its protection, the policy and counts", run: VaultCommands.status),
        Command(words: ["username", "get"], arguments: "", summary: "print the remembered username (exit 1 when none)", run: VaultCommands.usernameGet),
        Command(words: ["username", "set"], arguments: "NAME", summary: "remember NAME for the next login, if the policy and the user allow it",
                positionals: 1, run: VaultCommands.usernameSet),
        Command(words: ["username", "forget"], arguments: "", summary: "forget the remembered username", run: VaultCommands.usernameForget),
        Command(words: ["remember", "on"], arguments: "", summary: "allow remembering the username", run: VaultCommands.rememberOn),
        Command(words: ["remember", "off"], arguments: "", summary: "opt out of remembering the username; erases it at once", run: VaultCommands.rememberOff),
        Command(words: ["remember", "show"], arguments: "", summary: "show whether the username is remembered", run: VaultCommands.rememberShow),
        Command(words: ["session", "put"], arguments: "NAME [--account A] [--expires-in SECONDS]",
                summary: "save a session token read from standard input (one trailing newline stripped)",
                positionals: 1, options: ["--account", "--expires-in"], readsStandardInput: true, run: SessionCommands.put),
        Command(words: ["session", "get"], arguments: "NAME [--account A]",
                summary: "print a session token and a newline (exit 1 when missing or expired)",
                positionals: 1, options: ["--account"], run: SessionCommands.get),
        Command(words: ["session", "list"], arguments: "[--account A]", summary: "list sessions (names, accounts, times; never tokens)",
                options: ["--account"], run: SessionCommands.list),
        Command(words: ["session", "delete"], arguments: "NAME [--account A]", summary: "delete a session",
                positionals: 1, options: ["--account"], run: SessionCommands.delete),
        Command(words: ["logout"], arguments: "[--account A]", summary: "log out as the policy says: wipe sessions, keep or forget the username",
                options: ["--account"], run: VaultCommands.logout),
        Command(words: ["wipe"], arguments: "[--yes]", summary: "erase every credential of the app (asks on a terminal unless --yes)",
                flags: ["--yes"], run: VaultCommands.wipe),
        Command(words: ["migrate"], arguments: "", summary: "move a leftover encrypted file vault into the Secret Service", run: VaultCommands.migrate),
        Command(words: ["audit", "show"], arguments: "[--since SEQ]", summary: "print the audit trail (entries after SEQ)",
                options: ["--since"], run: AuditCommands.show),
        Command(words: ["audit", "verify"], arguments: "", summary: "verify the audit trail (exit 65 when it was altered)", run: AuditCommands.verify),
        Command(words: ["policy", "show"], arguments: "", summary: "print the policy in force", run: AuditCommands.policyShow),
        Command(words: ["policy", "check"], arguments: "FILE", summary: "validate a policy file (exit 65 naming the key when invalid)",
                positionals: 1, run: AuditCommands.policyCheck),
        Command(words: ["git-credential"], arguments: "get|store|erase",
                summary: "speak git's credential-helper protocol on standard input and output",
                positionals: 1, readsStandardInput: true, run: GitCommands.run),
        Command(words: ["demo"], arguments: "", summary: "a narrated walk-through in a throw-away store", run: DemoCommand.run),
    ]

    /// The command named by the front of `arguments`, which it removes.
    /// - Throws: `LatchkeyError` `.usage` naming the group's commands when the words name none.
    static func find(_ arguments: inout ArraySlice<String>) throws -> Command {
        guard let first = arguments.first else { throw LatchkeyError(.usage, "no command given") }
        let group = all.filter { $0.words[0] == first }
        guard !group.isEmpty else { throw LatchkeyError(.usage, "unknown command '\(first)'") }
        if let single = group.first, single.words.count == 1 {
            arguments.removeFirst()
            return single
        }
        let second = arguments.dropFirst().first.flatMap { $0.hasPrefix("-") ? nil : $0 }
        guard let command = group.first(where: { $0.words[1] == second }) else {
            let choices = group.map { $0.words[1] }.joined(separator: ", ")
            let what = second.map { "unknown command '\(first) \($0)'" } ?? "'\(first)' needs a command"
            throw LatchkeyError(.usage, "\(what): one of \(choices)")
        }
        arguments.removeFirst(2)
        return command
    }
}
