import LatchkeyCommands

/// The tool-wide part of the one description of the commands: global options,
/// environment, exit statuses and the texts about groups of commands
/// (``Command/all`` holds the commands themselves).
enum Tool {
    /// The tool's version, as `latchkey version` prints it.
    static var version: String { ToolVersion.current }

    /// What the tool does, in one line.
    static let summary =
        "keep an app's credentials in the Secret Service or an encrypted file, wipe them by policy, audit every event"

    /// The built-in policies `--policy built-in:NAME` names.
    static let builtInPolicies = ["built-in:default", "built-in:strict", "built-in:shared-device"]

    /// The names the binary answers to besides `latchkey`, each a page of the manual that points to latchkey(1).
    static let otherNames = ["git-credential-latchkey", "docker-credential-latchkey"]

    /// The pages `latchkey manpage PAGE` prints.
    static let manualPages = ["latchkey"] + otherNames

    /// The options every command takes, anywhere on the line.
    static let globalOptions: [Option] = [
        Option(key: .app, value: "ID", help: "the app namespace (default: $LATCHKEY_APP, else \"default\")"),
        Option(
            key: .policy, value: "FILE",
            help: "the policy file, or built-in:default, built-in:strict or built-in:shared-device "
                + "(default: $LATCHKEY_POLICY, else $XDG_CONFIG_HOME/latchkey/policy.json when it exists, else the built-in default policy)",
            completion: .file(also: builtInPolicies)),
        Option(
            key: .backend, value: "KIND",
            help:
                "the store: auto, secret-service or file (default: $LATCHKEY_BACKEND, else the policy's backend.kind)",
            completion: .choices(["auto", "secret-service", "file"])),
        Option(
            key: .storeDirectory, value: "DIR",
            help:
                "where the file vault and the audit trails live (default: $LATCHKEY_HOME, else $XDG_DATA_HOME/latchkey)",
            completion: .directory),
        Option(
            key: .passphraseDescriptor, value: "N",
            help: "read the file vault's passphrase from file descriptor N, up to its end"),
        Option(
            key: .passphraseFile, value: "PATH",
            help: "read the file vault's passphrase from a private (0600) file",
            completion: .file()),
        Option(key: .json, help: "write one JSON document with \"version\": 1 to standard output, help included"),
        Option(key: .help, short: "-h", help: "describe the tool, or the command on the line, and exit"),
        Option(key: .version, short: "-V", help: "print the version and exit"),
    ]

    /// The environment variables the tool reads; a flag always wins over them.
    static let environment: [EnvironmentVariable] = [
        EnvironmentVariable(name: "LATCHKEY_APP", help: "the app namespace when --app is not given"),
        EnvironmentVariable(
            name: "LATCHKEY_POLICY", help: "the policy file (or built-in:NAME) when --policy is not given"),
        EnvironmentVariable(
            name: "LATCHKEY_BACKEND", help: "the store (auto, secret-service or file) when --backend is not given"),
        EnvironmentVariable(name: "LATCHKEY_HOME", help: "the store directory when --store-dir is not given"),
        EnvironmentVariable(
            name: "XDG_CONFIG_HOME",
            help: "the user's policy is $XDG_CONFIG_HOME/latchkey/policy.json (else ~/.config/latchkey/policy.json)"),
        EnvironmentVariable(
            name: "XDG_DATA_HOME",
            help: "the default store directory is $XDG_DATA_HOME/latchkey (else ~/.local/share/latchkey)"),
        EnvironmentVariable(
            name: "XDG_RUNTIME_DIR",
            help: "the agent's socket is $XDG_RUNTIME_DIR/latchkey/agent.sock; without it every command runs in-process"
        ),
        EnvironmentVariable(
            name: "LATCHKEY_AGENT", help: "off: never use or start the agent; every command runs in-process"),
    ]

    /// Every exit status, from the one table of ``LatchkeyError/Code/exitStatusTable``.
    static let exitStatuses: [ExitStatus] = [
        ExitStatus(status: 0, meaning: "success"),
        ExitStatus(status: 1, meaning: "not found (no such session, no remembered username)"),
        ExitStatus(status: 64, meaning: "usage error (an unknown command or option, a bad value)"),
        ExitStatus(status: 65, meaning: "tampered or malformed input (vault, policy, audit trail, git input)"),
        ExitStatus(status: 69, meaning: "unavailable (no Secret Service, or a fallback the policy forbids)"),
        ExitStatus(status: 70, meaning: "internal error"),
        ExitStatus(status: 73, meaning: "cannot create (store directory or file)"),
        ExitStatus(status: 74, meaning: "I/O error"),
        ExitStatus(status: 75, meaning: "locked or timed out"),
        ExitStatus(status: 77, meaning: "wrong key or passphrase, insecure permissions, or policy denied"),
    ]

    /// What each group of commands is about, for the first word's completion and the manual.
    static let groupSummaries: [String: String] = [
        "username": "the remembered username",
        "remember": "the user's choice to remember the username",
        "session": "session tokens: save, print, list, delete",
        "secret": "the app's named secrets (API keys, client secrets): save, print, list, delete",
        "audit": "the audit trail: show, verify",
        "policy": "the policy: show, check",
        "agent": "the per-user agent: run, status, stop",
    ]

    /// What each first word's help and manual section say beyond the summaries.
    static let details: [String: String] = [
        "session": """
        Without --account a session belongs to the empty account. `session put` reads the token \
        from standard input up to its end and strips one trailing newline (on a terminal it asks, \
        without echo). `session get` prints the token and a newline; with --no-newline the exact \
        bytes stored and nothing else; with --json the "secret" field. A session's life is capped \
        by the policy's sessions.maxAgeSeconds.
        """,
        "secret": """
        A named secret belongs to the app, not to an account. `secret put` reads the value from         standard input up to its end (on a terminal it asks, without echo), or from --from-file         PATH, and strips one trailing newline; never from the command line. `secret get` prints         the value and a newline (--no-newline: the exact bytes; --json: the "value" field). The         policy's secrets section decides its life (no limit by default; never the session cap)         and whether a logout wipes it (kept by default); wipe always erases it.
        """,
        "wipe": """
        Erases every session, named secret and the remembered username of the app (the opt-out setting stays). \
        On a terminal it asks for confirmation; elsewhere it refuses without --yes.
        """,
        "git-credential": """
        Set up git with `git config --global credential.helper 'latchkey --backend file'` \
        (git then runs `git-credential-latchkey --backend file get`), or with the full path of \
        git-credential-latchkey. Passwords are kept as sessions of the account <username> named \
        git:<protocol>://<host>[/<path>], an OAuth refresh token as git-refresh:...; expired \
        passwords are never returned; erase removes only matching credentials.
        """,
        "demo": """
        Runs the main job on the encrypted file in a throw-away directory under $TMPDIR and \
        removes it afterwards: remember a username, status, a session with an expiry, opting out, \
        logout under the default policy, the audit trail and its verification.
        """,
        "policy": """
        `policy show` prints the policy in force (see --policy); `policy check FILE` validates a \
        file without using it. Fields are documented in policy/README.md.
        """,
        "completion": """
        Load it in the running shell with `source <(latchkey completion bash)` (zsh: \
        `source <(latchkey completion zsh)` after compinit; fish: `latchkey completion fish | source`).
        """,
    ]

    /// The summary of `word`'s group, or of the single command it names.
    static func summary(ofGroup word: String) -> String {
        groupSummaries[word] ?? Command.group(word).first?.summary ?? ""
    }
}
