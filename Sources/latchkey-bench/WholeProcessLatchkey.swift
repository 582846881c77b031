import Foundation

/// Whole-process figures for Latchkey's own commands: `latchkey --version`
/// (start-up alone), `latchkey session get` on each backend, and
/// `git credential fill` through `git-credential-latchkey`.
/// The command lines are all in ``Invocation``.
struct WholeProcessLatchkey {
    let runs: Int
    let binDirectory: String
    let gitHelperDirectory: String

    static let appID = FileBackendSection.appID
    static let sessionName = "access"
    static let gitName = "git credential fill, git-credential-latchkey"

    /// The `latchkey` command lines used here.
    enum Invocation {
        /// Stores a session token read from stdin.
        static func store(_ latchkey: String, backend: String) -> [String] {
            [latchkey, "--app", appID, "--backend", backend, "session", "put", sessionName]
        }

        /// Prints the session token.
        static func get(_ latchkey: String, backend: String) -> [String] {
            [latchkey, "--app", appID, "--backend", backend, "session", "get", sessionName]
        }
    }

    func run(secretServiceRunning: Bool, into report: inout Report) {
        let section = WholeProcessSection.section
        let latchkey = binDirectory + "/latchkey"
        let backends = [("secret-service", 1.1), ("file", 0.3)]
        guard FileManager.default.isExecutableFile(atPath: latchkey) else {
            for (backend, _) in backends { report.skip(section, name(backend), "\(latchkey) is not built (make bench builds it with -c release)") }
            report.skip(section, Self.gitName, "\(latchkey) is not built")
            return
        }
        do {
            report.add(section, "latchkey --version (start-up alone)", try Spawn.time(runs, [latchkey, "--version"]))
        } catch {
            report.skip(section, "latchkey --version (start-up alone)", "\(error)")
        }
        let secretTool = report.find(section, WholeProcessSection.secretToolName)
        for (backend, factor) in backends {
            if backend == "secret-service" && !secretServiceRunning {
                report.skip(section, name(backend), "no Secret Service on the session bus")
                continue
            }
            do {
                let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
                let stored = try Spawn.capture(Invocation.store(latchkey, backend: backend), input: token)
                let read = try Spawn.capture(Invocation.get(latchkey, backend: backend))
                guard stored.status == 0, read.status == 0, read.output.contains(token) else {
                    report.skip(section, name(backend), "storing and reading a session through the CLI did not round-trip (exit \(stored.status)/\(read.status)): \(stored.error)\(read.error)")
                    continue
                }
                var measurement = Measurement(section: section, name: name(backend), summary: try Spawn.time(runs, Invocation.get(latchkey, backend: backend)))
                if let secretTool { measurement.compare(with: secretTool, factor: factor, peer: "secret-tool") }
                report.add(measurement)
            } catch {
                report.skip(section, name(backend), "\(error)")
            }
        }
        measureGit(latchkey, into: &report)
    }

    private func name(_ backend: String) -> String { "latchkey session get, \(backend) backend" }

    private func measureGit(_ latchkey: String, into report: inout Report) {
        let section = WholeProcessSection.section
        do {
            try FileManager.default.createDirectory(atPath: gitHelperDirectory, withIntermediateDirectories: true)
            let helper = gitHelperDirectory + "/git-credential-latchkey"
            if !FileManager.default.fileExists(atPath: helper) {
                try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: latchkey)
            }
            let git = try GitCredential(directory: gitHelperDirectory + "/state", helper: helper)
            try git.approve()
            var measurement = Measurement(section: section, name: Self.gitName, summary: try git.timeFill(runs))
            if let peer = report.find(section, WholeProcessSection.gitLibsecretName) {
                measurement.compare(with: peer, factor: 1.2, peer: "git's libsecret helper")
            }
            report.add(measurement)
        } catch {
            report.skip(section, Self.gitName, "\(error)")
        }
    }
}
