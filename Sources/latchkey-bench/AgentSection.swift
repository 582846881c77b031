import Foundation

/// Whole-process figures with an agent running (docs/AGENT.md): `latchkey
/// session get` on each backend, `git credential fill` through
/// `git-credential-latchkey`, and the second `session get` on a passphrase vault
/// within the unlock cache time, each held against its peer timed in turn with it.
/// The commands run in a runtime directory of their own; the first starts the
/// agent, which `stop()` ends once everything is timed.
struct AgentSection {
    static let section = "whole process, agent running"

    let binDirectory: String
    let directory: String

    private var latchkey: String { binDirectory + "/latchkey" }
    private var environment: [String: String] {
        ["XDG_RUNTIME_DIR": directory + "/agent-runtime", "LATCHKEY_AGENT": "on"]
    }

    /// The commands to time, set up and checked; for each that cannot be, why.
    func commands(secretServiceRunning: Bool, into report: inout Report) -> [TimedCommand] {
        var commands: [TimedCommand] = []
        do {
            try FileManager.default.createDirectory(
                atPath: directory + "/agent-runtime", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            report.skip(Self.section, "agent", "\(error)")
            return commands
        }
        let secretTool = WholeProcessSection.secretToolName
        for (backend, factor) in [("secret-service", 0.3), ("file", 0.2)]
        where backend == "file" || secretServiceRunning {
            TimedCommand.prepare(
                "latchkey session get, \(backend) backend, through the agent", in: Self.section,
                target: (secretTool, factor, "secret-tool"), into: &commands, &report
            ) {
                let app = "agent-bench-\(backend)"
                let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
                let stored = try Spawn.capture(
                    [latchkey, "--app", app, "--backend", backend, "session", "put", "access"], input: token,
                    environment: environment)
                let get = [latchkey, "--app", app, "--backend", backend, "session", "get", "access"]
                let read = try Spawn.capture(get, environment: environment)
                guard stored.status == 0, read.output.contains(token) else {
                    throw Spawn.Failure(
                        description:
                            "the agent did not round-trip a session (exit \(stored.status)/\(read.status)): \(stored.error)\(read.error)"
                    )
                }
                return Spawn.Command(arguments: get, stdin: nil, environment: environment)
            }
        }
        TimedCommand.prepare(
            "latchkey session get, passphrase vault unlocked in the agent", in: Self.section,
            target: (secretTool, 0.3, "secret-tool"), into: &commands, &report
        ) {
            try unlockedPassphraseVault()
        }
        TimedCommand.prepare(
            "git credential fill, git-credential-latchkey through the agent", in: Self.section,
            target: (WholeProcessSection.gitLibsecretName, 0.6, "git's libsecret helper"), into: &commands, &report
        ) {
            let helper = directory + "/agent-git-helper/git-credential-latchkey"
            try FileManager.default.createDirectory(
                atPath: directory + "/agent-git-helper", withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: helper) {
                try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: latchkey)
            }
            let git = try GitCredential(
                directory: directory + "/agent-git-state", helper: helper, extraEnvironment: environment)
            try git.approve()
            return git.fill
        }
        return commands
    }

    /// Ends the agent the commands started.
    func stop() {
        _ = try? Spawn.capture([latchkey, "agent", "stop"], environment: environment)
    }

    /// Saves a session in a passphrase vault (the policy's default Argon2id
    /// parameters) with the passphrase from a file; then `session get` without
    /// any passphrase, which the agent answers with the key it holds.
    private func unlockedPassphraseVault() throws -> Spawn.Command {
        let policy = directory + "/agent-passphrase-policy.json"
        try Data(
            #"{"version": 1, "name": "agent-bench", "backend": {"kind": "file"}, "file": {"keySource": "passphrase"}, "agent": {"unlockCacheSeconds": 900}}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: policy))
        let passphrase = directory + "/agent-passphrase"
        _ = FileManager.default.createFile(
            atPath: passphrase, contents: Data("bench passphrase".utf8), attributes: [.posixPermissions: 0o600])
        let common = [latchkey, "--app", "agent-bench-passphrase", "--policy", policy]
        let stored = try Spawn.capture(
            common + ["--passphrase-file", passphrase, "session", "put", "access"], input: "token",
            environment: environment)
        let get = common + ["session", "get", "access"]
        let read = try Spawn.capture(get, environment: environment)
        guard stored.status == 0, read.output == "token\n" else {
            throw Spawn.Failure(
                description:
                    "the agent did not keep the passphrase vault unlocked (exit \(stored.status)/\(read.status)): \(stored.error)\(read.error)"
            )
        }
        return Spawn.Command(arguments: get, stdin: nil, environment: environment)
    }
}
