import Foundation

/// Whole-process figures (start to exit): the peers, which need nothing from
/// Latchkey (`secret-tool lookup`, `git credential fill` through git's own
/// libsecret helper), Latchkey's commands run in-process (in
/// `WholeProcessLatchkey.swift`) and through the agent (`AgentSection.swift`).
/// Each part sets up and checks its commands; then every command is timed in
/// turn with every other (one run of each, round after round), so that each
/// figure and the peer it is held against see the same moments of the machine.
struct WholeProcessSection {
    let directory: String
    let runs: Int
    /// git's libsecret credential helper, when one was built or installed.
    let gitLibsecretHelper: String?
    /// The directory holding the release `latchkey` binary.
    let binDirectory: String

    static let section = "whole process (start to exit)"
    static let secretToolName = "secret-tool lookup (libsecret CLI)"
    static let gitLibsecretName = "git credential fill, git's libsecret helper"

    func run(secretServiceRunning hasSecretService: Bool, into report: inout Report) throws {
        report.notes.append(
            "whole process: posix_spawnp + waitpid, stdout to /dev/null, \(runs) timed runs of each after 3 untimed, every command in turn (one run of each, round after round)"
        )
        let agent = AgentSection(binDirectory: binDirectory, directory: directory)
        defer { agent.stop() }
        let commands =
            peers(hasSecretService, into: &report)
            + WholeProcessLatchkey(binDirectory: binDirectory, gitHelperDirectory: directory + "/git-helper").commands(
                secretServiceRunning: hasSecretService, into: &report)
            + agent.commands(secretServiceRunning: hasSecretService, into: &report)
        let summaries: [Summary]
        do {
            summaries = try Spawn.timeInTurn(runs, commands.map(\.command))
        } catch {
            for timed in commands { report.skip(timed.section, timed.name, "\(error)") }
            return
        }
        for (timed, summary) in zip(commands, summaries) {
            let measurement = Measurement(section: timed.section, name: timed.name, summary: summary)
            // A floor is found in the command's own section first (a command through the
            // agent held against another through the agent), then among the peers.
            guard let target = timed.target,
                let floor = report.find(timed.section, target.floor) ?? report.find(Self.section, target.floor)
            else {
                report.add(measurement)
                continue
            }
            report.add(
                FileBackendSection.withRatioTarget(
                    FileBackendSection.compare(measurement, with: floor, target: nil),
                    ("<= \(target.factor)x \(target.peer)", target.factor)))
        }
    }

    /// Whether a Secret Service owns its D-Bus name on the session bus.
    static func secretServiceRunning() -> Bool {
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil, Spawn.which("dbus-send") != nil,
            let reply = try? Spawn.capture([
                "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets",
            ])
        else {
            return false // no bus or no dbus-send: the Secret Service figures are reported as not measured
        }
        return reply.output.contains("boolean true")
    }

    /// The peers' commands, set up and checked; for each that cannot be, why.
    private func peers(_ hasSecretService: Bool, into report: inout Report) -> [TimedCommand] {
        var commands: [TimedCommand] = []
        TimedCommand.prepare(
            Self.secretToolName, in: Self.section,
            unless: [
                (Spawn.which("secret-tool") == nil, "secret-tool is not installed (Debian package libsecret-tools)"),
                (
                    !hasSecretService,
                    "no Secret Service on the session bus (run inside .ci/with-keyring, as make bench does)"
                ),
            ], into: &commands, &report
        ) {
            let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
            let stored = try Spawn.capture(
                ["secret-tool", "store", "--label=latchkey-bench", "latchkey-bench", "secret-tool"], input: token)
            let found = try Spawn.capture(["secret-tool", "lookup", "latchkey-bench", "secret-tool"])
            guard stored.status == 0, found.status == 0, found.output.trimmingCharacters(in: .newlines) == token else {
                throw Spawn.Failure(
                    description: "secret-tool store/lookup did not round-trip: \(stored.error)\(found.error)")
            }
            return Spawn.Command(arguments: ["secret-tool", "lookup", "latchkey-bench", "secret-tool"], stdin: nil)
        }
        TimedCommand.prepare(
            Self.gitLibsecretName, in: Self.section,
            unless: [
                (
                    gitLibsecretHelper == nil,
                    "git-credential-libsecret is not installed (Debian ships only its source; make bench builds it from /usr/share/doc/git/contrib/credential/libsecret when that is there)"
                ),
                (!hasSecretService, "no Secret Service on the session bus"),
            ], into: &commands, &report
        ) {
            let git = try GitCredential(directory: directory + "/git-libsecret", helper: gitLibsecretHelper!)
            try git.approve()
            return git.fill
        }
        return commands
    }
}

/// One whole-process command, set up and checked, waiting to be timed in turn
/// with the others; and what its figure is held against: the peer's figure in
/// ``WholeProcessSection/section`` named `floor`, times `factor`.
struct TimedCommand {
    var section: String
    var name: String
    var command: Spawn.Command
    var target: (floor: String, factor: Double, peer: String)?

    /// Adds `name`'s command from `body` to `commands`; or, to `report`, why it
    /// is not measured: the first of `missing` that applies, or the error `body` throws.
    static func prepare(
        _ name: String, in section: String, unless missing: [(Bool, String)] = [],
        target: (floor: String, factor: Double, peer: String)? = nil,
        into commands: inout [TimedCommand], _ report: inout Report, _ body: () throws -> Spawn.Command
    ) {
        if let reason = missing.first(where: { $0.0 })?.1 {
            report.skip(section, name, reason)
            return
        }
        do {
            commands.append(TimedCommand(section: section, name: name, command: try body(), target: target))
        } catch {
            report.skip(section, name, "\(error)")
        }
    }
}

/// `git credential` through one helper, isolated from the user's git configuration.
struct GitCredential {
    let helper: String
    let request: String
    let environment: [String: String]
    static let host = "bench.latchkey.example"

    init(directory: String, helper: String, extraEnvironment: [String: String] = [:]) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.helper = helper
        request = directory + "/request"
        try Data("protocol=https\nhost=\(Self.host)\nusername=bench\n\n".utf8).write(to: URL(fileURLWithPath: request))
        environment = [
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "/bin/false",
        ]
        .merging(extraEnvironment) { $1 }
    }

    private var arguments: [String] {
        ["git", "-c", "credential.helper=", "-c", "credential.helper=\(helper)", "credential"]
    }

    /// Stores a token for the host through the helper, and checks that `fill` returns it.
    func approve() throws {
        let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
        let stored = try Spawn.capture(
            arguments + ["approve"], input: "protocol=https\nhost=\(Self.host)\nusername=bench\npassword=\(token)\n\n",
            environment: environment)
        let filled = try Spawn.capture(
            arguments + ["fill"], input: "protocol=https\nhost=\(Self.host)\nusername=bench\n\n",
            environment: environment)
        guard stored.status == 0, filled.status == 0, filled.output.contains("password=\(token)\n") else {
            throw Spawn.Failure(
                description:
                    "git credential approve/fill through \(helper) did not round-trip (exit \(stored.status)/\(filled.status)): \(stored.error)\(filled.error)"
            )
        }
    }

    /// `git credential fill` for the host, to time.
    var fill: Spawn.Command { Spawn.Command(arguments: arguments + ["fill"], stdin: request, environment: environment) }
}
