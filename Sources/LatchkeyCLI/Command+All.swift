import LatchkeyCommands

/// The one description of the `latchkey` commands. The parser, `--help`,
/// `latchkey help`, the manual page latchkey(1) and the bash, zsh and fish
/// completions are all produced from this table and ``Tool``, so they cannot disagree.
extension Command {
    /// Every command, in the order `--help` and the manual page list them.
    static let all: [Command] = [
        Command(
            words: ["status"],
            summary:
                "show the store in use and why, its protection, the policy, where each setting came from, and counts",
            store: StoreCommands.status),
        Command(
            words: ["username", "get"], summary: "print the remembered username",
            exits: [ExitStatus(status: 1, meaning: "no username is remembered")],
            store: StoreCommands.plain(.usernameGet)),
        Command(
            words: ["username", "set"], arguments: [Argument(name: "NAME")],
            summary: "remember NAME for the next login, if the policy and the user allow it",
            exits: [ExitStatus(status: 77, meaning: "the policy or the user's opt-out refuses it")],
            store: StoreCommands.usernameSet),
        Command(
            words: ["username", "forget"], summary: "forget the remembered username",
            store: StoreCommands.plain(.usernameForget)),
        Command(
            words: ["remember", "on"], summary: "allow remembering the username",
            store: StoreCommands.plain(.rememberOn)),
        Command(
            words: ["remember", "off"], summary: "opt out of remembering the username; erases it at once",
            store: StoreCommands.plain(.rememberOff)),
        Command(
            words: ["remember", "show"], summary: "show whether the username is remembered",
            store: StoreCommands.plain(.rememberShow)),
        Command(
            words: ["session", "put"], arguments: [Argument(name: "NAME")],
            summary: "save a session token read from standard input (one trailing newline stripped)",
            options: [
                account, expiresIn,
                Option(
                    key: .grant,
                    help: "read an OAuth 2.0 token response (RFC 6749 5.1: access_token, token_type, expires_in, "
                        + "refresh_token, scope) and keep it as one grant"),
            ],
            readsStandardInput: true,
            exits: [ExitStatus(status: 65, meaning: "the token read is empty, or --grant's token response is not one")],
            store: StoreCommands.sessionPut),
        Command(
            words: ["session", "get"], arguments: [Argument(name: "NAME")],
            summary: "print a session token followed by a newline",
            options: [
                account,
                Option(key: .noNewline, short: "-n", help: "write the token's exact bytes and nothing else"),
                Option(
                    key: .refreshCommand, value: "CMD",
                    help: "print a valid access token of a grant: when a refresh is due, one process runs CMD "
                        + "(/bin/sh -c) with the refresh token on its standard input and reads the token "
                        + "endpoint's answer (RFC 6749 5.1 or 5.2) on its standard output"),
            ],
            exits: [
                ExitStatus(status: 1, meaning: "the session is missing or expired"),
                ExitStatus(
                    status: 75,
                    meaning: "--refresh-command got no new grant (endpoint down or other answer); the grant is kept"),
                ExitStatus(status: 77, meaning: "--refresh-command was rejected (invalid_grant): the session ended"),
            ],
            store: StoreCommands.sessionGet),
        Command(
            words: ["session", "list"], summary: "list sessions: names, accounts and times, never tokens",
            options: [everyAccount], store: StoreCommands.sessionList),
        Command(
            words: ["session", "delete"], arguments: [Argument(name: "NAME")], summary: "delete a session",
            options: [account], store: StoreCommands.sessionDelete),
        Command(
            words: ["secret", "put"], arguments: [Argument(name: "NAME")],
            summary:
                "save a named secret of the app read from standard input or a file (one trailing newline stripped)",
            options: [
                Option(
                    key: .fromFile, value: "PATH", help: "read the value from this file (an absolute path)",
                    completion: .file())
            ],
            readsStandardInput: true,
            exits: [ExitStatus(status: 65, meaning: "the value read is empty")], store: StoreCommands.secretPut),
        Command(
            words: ["secret", "get"], arguments: [Argument(name: "NAME")],
            summary: "print a named secret followed by a newline",
            options: [
                Option(key: .noNewline, short: "-n", help: "write the value's exact bytes and nothing else")
            ],
            exits: [ExitStatus(status: 1, meaning: "the secret is missing or expired")], store: StoreCommands.secretGet),
        Command(
            words: ["secret", "list"], summary: "list named secrets: names and times, never values",
            store: StoreCommands.plain(.secretList)),
        Command(
            words: ["secret", "delete"], arguments: [Argument(name: "NAME")], summary: "delete a named secret",
            store: StoreCommands.secretDelete),
        Command(
            words: ["logout"], summary: "log out as the policy says: wipe sessions, keep or forget the username",
            options: [everyAccount], store: StoreCommands.logout),
        Command(
            words: ["wipe"], summary: "erase every credential of the app (asks on a terminal unless --yes)",
            options: [yes],
            exits: [ExitStatus(status: 64, meaning: "standard input is not a terminal and --yes is missing")],
            store: StoreCommands.wipe),
        Command(
            words: ["migrate"], summary: "move a leftover encrypted file vault into the Secret Service",
            exits: [ExitStatus(status: 69, meaning: "the encrypted file is the store in use")],
            store: StoreCommands.plain(.migrate)),
        Command(
            words: ["audit", "show"], summary: "print the audit trail",
            options: [Option(key: .since, value: "SEQ", help: "only the entries after sequence number SEQ")],
            store: StoreCommands.auditShow),
        Command(
            words: ["audit", "verify"],
            summary: "verify the audit trail, read-only; names every reset and the segment it kept",
            exits: [ExitStatus(status: 65, meaning: "a trail was altered (the first bad sequence is named)")],
            store: StoreCommands.plain(.auditVerify)),
        Command(
            words: ["audit", "reset"],
            summary:
                "set a broken audit trail aside (kept, renamed) and start a new chain that records the reset (asks on a terminal unless --yes)",
            options: [yes],
            exits: [ExitStatus(status: 64, meaning: "standard input is not a terminal and --yes is missing")],
            store: StoreCommands.auditReset),
        Command(words: ["policy", "show"], summary: "print the policy in force", run: PolicyCommands.policyShow),
        Command(
            words: ["policy", "check"], arguments: [Argument(name: "FILE", completion: .file())],
            summary: "validate a policy file without using it",
            exits: [ExitStatus(status: 65, meaning: "the policy is invalid (the key is named)")],
            run: PolicyCommands.policyCheck),
        Command(
            words: ["git-credential"],
            arguments: [Argument(name: "ACTION", completion: .choices(["get", "store", "erase"]))],
            summary: "speak git's credential-helper protocol on standard input and output",
            readsStandardInput: true, store: StoreCommands.gitCredential),
        Command(
            words: ["docker-credential"],
            arguments: [Argument(name: "ACTION", completion: .choices(["store", "get", "erase", "list", "version"]))],
            summary:
                "speak docker's credential-helper protocol on standard input and output (as docker-credential-latchkey)",
            readsStandardInput: true,
            exits: [
                ExitStatus(
                    status: 1,
                    meaning: "get: no credential for the registry (\"credentials not found in native keychain\")")
            ],
            store: StoreCommands.dockerCredential),
        Command(
            words: ["agent", "run"],
            summary:
                "serve the command line and the credential helpers in the foreground, for a service manager (also `latchkey agent` alone)",
            options: [
                Option(
                    key: .secretService,
                    help: "serve the Secret Service (org.freedesktop.secrets) on the session bus too, when no other "
                        + "provider owns it, and do not exit when idle")
            ],
            isGroupDefault: true, run: AgentCommands.run),
        Command(
            words: ["agent", "status"],
            summary:
                "say whether an agent runs, since when, which namespaces it serves and which vaults it holds unlocked (never a secret)",
            exits: [ExitStatus(status: 1, meaning: "no agent runs")], run: AgentCommands.status),
        Command(
            words: ["agent", "stop"], summary: "stop the agent; it forgets every passphrase it holds",
            run: AgentCommands.stop),
        Command(
            words: ["agent", "enable-secret-service"],
            summary:
                "let the session bus start the agent's Secret Service provider: write a systemd user unit and a D-Bus activation file (a host with no other provider)",
            exits: [
                ExitStatus(
                    status: 73,
                    meaning:
                        "another provider owns or can be activated for org.freedesktop.secrets, or a file not Latchkey's is in the way (nothing written)"
                )
            ],
            run: ProviderCommands.enable),
        Command(
            words: ["agent", "disable-secret-service"],
            summary: "remove the unit and activation file that enable-secret-service wrote (never another provider's)",
            run: ProviderCommands.disable),
        Command(
            words: ["lock"],
            summary: "make the agent forget every passphrase it holds: the next use of a passphrase vault asks again",
            run: AgentCommands.lock),
        Command(
            words: ["unlock"],
            summary:
                "unlock the agent's Secret Service provider (a passphrase vault), completing the prompts its clients wait on",
            run: ProviderCommands.unlock),
        Command(words: ["demo"], summary: "a narrated walk-through in a throw-away store", run: DemoCommand.run),
        Command(
            words: ["help"],
            arguments: [
                Argument(name: "COMMAND", optional: true, completion: .command),
                Argument(name: "SUBCOMMAND", optional: true),
            ],
            summary: "describe the tool, or one command (like COMMAND --help)",
            exits: [ExitStatus(status: 64, meaning: "there is no such command")], run: ToolCommands.help),
        Command(words: ["version"], summary: "print the version (like --version and -V)", run: ToolCommands.version),
        Command(
            words: ["completion"], arguments: [Argument(name: "SHELL", completion: .choices(ShellCompletion.shells))],
            summary: "print the completion script for a shell (make install installs all three)",
            run: ToolCommands.completion),
        Command(
            words: ["manpage"],
            arguments: [Argument(name: "PAGE", optional: true, completion: .choices(Tool.manualPages))],
            summary: "print the manual page latchkey(1) in roff, or the page that points another name to it",
            run: ToolCommands.manualPage),
    ]

    /// `--yes` of the commands that ask for confirmation.
    private static let yes = Option(
        key: .yes, help: "do not ask for confirmation (needed when standard input is not a terminal)")
    /// `--account A` of one session.
    private static let account = Option(
        key: .account, value: "A", help: "the account the session belongs to (default: the empty account)")
    /// `--account A` of commands that otherwise cover every account.
    private static let everyAccount = Option(
        key: .account, value: "A", help: "only this account (default: every account)")
    /// `--expires-in DURATION`.
    private static let expiresIn = Option(
        key: .expiresIn, value: "DURATION",
        help: "the session's life: seconds, or a duration such as 90s, 30m, 12h, 7d or 1h30m "
            + "(capped by the policy's sessions.maxAgeSeconds)")
}
