import Foundation

/// Whole-process figures (start to exit): the peers, which need nothing from
/// Latchkey (`secret-tool lookup`, `git credential fill` through git's own
/// libsecret helper), and Latchkey's commands (in `WholeProcessLatchkey.swift`).
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
        report.notes.append("whole process: posix_spawnp + waitpid, stdout to /dev/null, \(runs) timed runs after 3 untimed")
        measureSecretTool(hasSecretService, into: &report)
        measureGitLibsecret(hasSecretService, into: &report)
        WholeProcessLatchkey(runs: runs, binDirectory: binDirectory, gitHelperDirectory: directory + "/git-helper")
            .run(secretServiceRunning: hasSecretService, into: &report)
        AgentSection(runs: runs, binDirectory: binDirectory, directory: directory).run(secretServiceRunning: hasSecretService, into: &report)
    }

    /// Whether a Secret Service owns its D-Bus name on the session bus.
    static func secretServiceRunning() -> Bool {
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil, Spawn.which("dbus-send") != nil,
              let reply = try? Spawn.capture(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                                              "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"]) else {
            return false // no bus or no dbus-send: the Secret Service figures are reported as not measured
        }
        return reply.output.contains("boolean true")
    }

    /// Adds `name`'s figure from `body`, or why it was not measured: the first
    /// of `missing` that applies, or the error `body` throws.
    private func measure(_ name: String, unless missing: [(Bool, String)], into report: inout Report, _ body: () throws -> Summary) {
        if let reason = missing.first(where: { $0.0 })?.1 {
            report.skip(Self.section, name, reason)
            return
        }
        do {
            report.add(Self.section, name, try body())
        } catch {
            report.skip(Self.section, name, "\(error)")
        }
    }

    private func measureSecretTool(_ hasSecretService: Bool, into report: inout Report) {
        measure(Self.secretToolName, unless: [
            (Spawn.which("secret-tool") == nil, "secret-tool is not installed (Debian package libsecret-tools)"),
            (!hasSecretService, "no Secret Service on the session bus (run inside .ci/with-keyring, as make bench does)"),
        ], into: &report) {
            let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
            let stored = try Spawn.capture(["secret-tool", "store", "--label=latchkey-bench", "latchkey-bench", "secret-tool"], input: token)
            let found = try Spawn.capture(["secret-tool", "lookup", "latchkey-bench", "secret-tool"])
            guard stored.status == 0, found.status == 0, found.output.trimmingCharacters(in: .newlines) == token else {
                throw Spawn.Failure(description: "secret-tool store/lookup did not round-trip: \(stored.error)\(found.error)")
            }
            return try Spawn.time(runs, ["secret-tool", "lookup", "latchkey-bench", "secret-tool"])
        }
    }

    private func measureGitLibsecret(_ hasSecretService: Bool, into report: inout Report) {
        measure(Self.gitLibsecretName, unless: [
            (gitLibsecretHelper == nil, "git-credential-libsecret is not installed (Debian ships only its source; make bench builds it from /usr/share/doc/git/contrib/credential/libsecret when that is there)"),
            (!hasSecretService, "no Secret Service on the session bus"),
        ], into: &report) {
            let git = try GitCredential(directory: directory + "/git-libsecret", helper: gitLibsecretHelper!)
            try git.approve()
            return try git.timeFill(runs)
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
        environment = ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false"]
            .merging(extraEnvironment) { $1 }
    }

    private var arguments: [String] { ["git", "-c", "credential.helper=", "-c", "credential.helper=\(helper)", "credential"] }

    /// Stores a token for the host through the helper, and checks that `fill` returns it.
    func approve() throws {
        let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
        let stored = try Spawn.capture(arguments + ["approve"], input: "protocol=https\nhost=\(Self.host)\nusername=bench\npassword=\(token)\n\n", environment: environment)
        let filled = try Spawn.capture(arguments + ["fill"], input: "protocol=https\nhost=\(Self.host)\nusername=bench\n\n", environment: environment)
        guard stored.status == 0, filled.status == 0, filled.output.contains("password=\(token)\n") else {
            throw Spawn.Failure(description: "git credential approve/fill through \(helper) did not round-trip (exit \(stored.status)/\(filled.status)): \(stored.error)\(filled.error)")
        }
    }

    func timeFill(_ runs: Int) throws -> Summary {
        try Spawn.time(runs, arguments + ["fill"], stdin: request, environment: environment)
    }
}
