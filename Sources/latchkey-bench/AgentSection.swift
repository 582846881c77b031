import Foundation

/// Whole-process figures with an agent running (docs/AGENT.md): `latchkey
/// session get` on each backend, `git credential fill` through
/// `git-credential-latchkey`, and the second `session get` on a passphrase vault
/// within the unlock cache time, each beside its peer measured in the same run.
/// The commands run in a runtime directory of their own; the first starts the
/// agent, and the untimed warm-up runs come before the timed ones.
struct AgentSection {
    static let section = "whole process, agent running"

    let runs: Int
    let binDirectory: String
    let directory: String

    func run(secretServiceRunning: Bool, into report: inout Report) {
        let latchkey = binDirectory + "/latchkey"
        let runtime = directory + "/agent-runtime"
        let environment = ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": "on"]
        do {
            try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            report.skip(Self.section, "agent", "\(error)")
            return
        }
        defer { _ = try? Spawn.capture([latchkey, "agent", "stop"], environment: environment) }
        let secretTool = report.find(WholeProcessSection.section, WholeProcessSection.secretToolName)
        for (backend, factor) in [("secret-service", 0.35), ("file", 0.25)] where backend == "file" || secretServiceRunning {
            let name = "latchkey session get, \(backend) backend, through the agent"
            measure(name, floor: secretTool, factor: factor, peer: "secret-tool", into: &report) {
                let app = "agent-bench-\(backend)"
                let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
                let stored = try Spawn.capture([latchkey, "--app", app, "--backend", backend, "session", "put", "access"], input: token, environment: environment)
                let get = [latchkey, "--app", app, "--backend", backend, "session", "get", "access"]
                let read = try Spawn.capture(get, environment: environment)
                guard stored.status == 0, read.output.contains(token) else {
                    throw Spawn.Failure(description: "the agent did not round-trip a session (exit \(stored.status)/\(read.status)): \(stored.error)\(read.error)")
                }
                return try Spawn.time(runs, get, environment: environment)
            }
        }
        measure("latchkey session get, passphrase vault unlocked in the agent", floor: secretTool, factor: 0.3, peer: "secret-tool", into: &report) {
            try timeUnlockedPassphraseVault(latchkey, environment)
        }
        measure("git credential fill, git-credential-latchkey through the agent",
                floor: report.find(WholeProcessSection.section, WholeProcessSection.gitLibsecretName), factor: 0.6,
                peer: "git's libsecret helper", into: &report) {
            let helper = directory + "/agent-git-helper/git-credential-latchkey"
            try FileManager.default.createDirectory(atPath: directory + "/agent-git-helper", withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: helper) { try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: latchkey) }
            let git = try GitCredential(directory: directory + "/agent-git-state", helper: helper, extraEnvironment: environment)
            try git.approve()
            return try git.timeFill(runs)
        }
    }

    /// Saves a session in a passphrase vault (the policy's default Argon2id
    /// parameters) with the passphrase from a file; then times `session get`
    /// without any passphrase, which the agent answers with the key it holds.
    private func timeUnlockedPassphraseVault(_ latchkey: String, _ environment: [String: String]) throws -> Summary {
        let policy = directory + "/agent-passphrase-policy.json"
        try Data(#"{"version": 1, "name": "agent-bench", "backend": {"kind": "file"}, "file": {"keySource": "passphrase"}, "agent": {"unlockCacheSeconds": 900}}"#.utf8)
            .write(to: URL(fileURLWithPath: policy))
        let passphrase = directory + "/agent-passphrase"
        _ = FileManager.default.createFile(atPath: passphrase, contents: Data("bench passphrase".utf8), attributes: [.posixPermissions: 0o600])
        let common = [latchkey, "--app", "agent-bench-passphrase", "--policy", policy]
        let stored = try Spawn.capture(common + ["--passphrase-file", passphrase, "session", "put", "access"], input: "token", environment: environment)
        let get = common + ["session", "get", "access"]
        let read = try Spawn.capture(get, environment: environment)
        guard stored.status == 0, read.output == "token\n" else {
            throw Spawn.Failure(description: "the agent did not keep the passphrase vault unlocked (exit \(stored.status)/\(read.status)): \(stored.error)\(read.error)")
        }
        return try Spawn.time(runs, get, environment: environment)
    }

    private func measure(_ name: String, floor: Measurement?, factor: Double, peer: String, into report: inout Report, _ body: () throws -> Summary) {
        do {
            var measurement = Measurement(section: Self.section, name: name, summary: try body())
            if let floor { measurement.compare(with: floor, factor: factor, peer: peer) }
            report.add(measurement)
        } catch {
            report.skip(Self.section, name, "\(error)")
        }
    }
}
