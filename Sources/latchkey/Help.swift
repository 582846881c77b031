/// The `--help` texts, built from the command table so they cannot drift from it.
enum Help {
    static let version = "0.1.0"

    static let globalOptions = """
    Global options (before the command):
      --app ID                 the app namespace (default: $LATCHKEY_APP, else "default")
      --policy FILE            the policy file, or built-in:default|strict|shared-device
                               (default: $XDG_CONFIG_HOME/latchkey/policy.json when present,
                               else the built-in default policy)
      --backend auto|secret-service|file
                               override the policy's store
      --store-dir DIR          the file vault and audit trails (default: $LATCHKEY_HOME,
                               else $XDG_DATA_HOME/latchkey)
      --passphrase-fd N        read the file vault's passphrase from descriptor N
      --passphrase-file PATH   read it from a private (0600) file
                               (else a no-echo prompt when standard input is a terminal;
                               never from arguments or the environment)
      --json                   write one JSON document with "version": 1 to standard output
      --help, --version
    """

    static let exitStatuses = """
    Exit status:
      0   success
      1   not found (no such session, no remembered username)
      64  usage error
      65  tampered or malformed input (vault, policy, audit trail, git input)
      69  unavailable (no Secret Service, or a fallback the policy forbids)
      70  internal error
      73  cannot create (store directory or file)
      74  I/O error
      75  locked or timed out
      77  wrong key or passphrase, insecure permissions, or policy denied
    """

    /// `latchkey --help`.
    static var tool: String {
        let width = 26
        let commands = Command.all.map {
            let line = commandLine($0)
            guard line.count < width else { return "  \(line)\n  " + String(repeating: " ", count: width) + $0.summary }
            return "  " + line + String(repeating: " ", count: width - line.count) + $0.summary
        }.joined(separator: "\n")
        return """
        latchkey \(version): keeps an app's credentials (remembered username, session tokens)
        in the Secret Service or an encrypted file, wipes them by policy, and audits every event.

        Usage: latchkey [global options] COMMAND [arguments]
               git-credential-latchkey [global options] get|store|erase

        Commands:
        \(commands)

        \(globalOptions)

        Secrets (tokens, passphrases) are read from standard input, a file descriptor or a
        no-echo prompt. `session get` prints the token followed by a newline.
        Errors go to standard error as "latchkey: <message>".

        \(exitStatuses)

        `latchkey COMMAND --help` describes one command. See docs/CLI.md.
        """
    }

    /// `latchkey WORD --help`: every command named by `word`.
    static func group(_ word: String) -> String {
        let commands = Command.all.filter { $0.words[0] == word }
        var text = commands.map { "Usage: \($0.usage)\n  \($0.summary)" }.joined(separator: "\n")
        if let extra = details[word] { text += "\n\n" + extra }
        return text + "\n\n" + globalOptions + "\n\n" + exitStatuses
    }

    /// The usage lines of the commands named by `word`, or the tool's.
    static func usage(_ word: String?) -> String {
        let commands = Command.all.filter { $0.words[0] == word }
        guard !commands.isEmpty else { return "Usage: latchkey [global options] COMMAND [arguments] (see latchkey --help)" }
        return commands.map { "Usage: \($0.usage)" }.joined(separator: "\n")
    }

    private static func commandLine(_ command: Command) -> String {
        (command.words + (command.arguments.isEmpty ? [] : [command.arguments])).joined(separator: " ")
    }

    private static let details: [String: String] = [
        "session": """
        Without --account a session belongs to the empty account. `session put` reads the token
        from standard input up to its end and strips one trailing newline (on a terminal it asks,
        without echo); `session get` prints the token and a newline, or with --json puts it in
        the "secret" field. A session's life is capped by the policy's sessions.maxAgeSeconds.
        """,
        "wipe": """
        Erases every session and the remembered username of the app (the opt-out setting stays).
        On a terminal it asks for confirmation; elsewhere it refuses without --yes.
        """,
        "git-credential": """
        Set up git with:
          git config --global credential.helper 'latchkey --backend file'
        (git then runs `git-credential-latchkey --backend file get`), or with the full path of
        git-credential-latchkey. Passwords are kept as sessions of the account <username> named
        git:<protocol>://<host>[/<path>]; an OAuth refresh token as git-refresh:...; expired
        passwords are never returned; erase removes only matching credentials.
        """,
        "demo": """
        Runs the main job on the encrypted file in a throw-away directory under $TMPDIR and
        removes it afterwards: remember a username, status, a session with an expiry, opting out,
        logout under the default policy, the audit trail and its verification.
        """,
        "policy": """
        `policy show` prints the policy in force (see --policy); `policy check FILE` validates a
        file without using it. Fields are documented in policy/README.md.
        """,
    ]
}
