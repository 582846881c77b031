import Foundation
import Latchkey
import CredentialHelpers

/// Issue 16: what one `git-credential-latchkey get` costs (whole process) with
/// one git credential stored in the namespace and with 1,000 (each on its own
/// host), on each backend. `get` reads the index of the request's host and the
/// sessions it names, so the second figure should stay within 1.5x the first.
struct GitScaleSection {
    let directory: String
    let runs: Int
    /// The directory holding the release `latchkey` binary.
    let binDirectory: String
    /// How many credentials the large namespace holds.
    var largeCount = 1_000

    static let section = "git credential helper get, by credentials stored"

    func run(secretServiceRunning: Bool, into report: inout Report) {
        let helper = directory + "/git-scale/git-credential-latchkey"
        do {
            try FileManager.default.createDirectory(atPath: directory + "/git-scale", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: binDirectory + "/latchkey")
        } catch {
            report.skip(Self.section, "git-credential-latchkey get", "\(error)")
            return
        }
        for backend in [Policy.BackendChoice.secretService, .file] {
            let label = backend == .file ? "file" : "secret-service"
            if backend == .secretService && !secretServiceRunning {
                report.skip(Self.section, "git-credential-latchkey get, \(label)", "no Secret Service on the session bus")
                continue
            }
            do {
                let one = try measure(helper, backend: backend, label: label, count: 1)
                let small = report.add(Self.section, "get, 1 credential stored, \(label)", one)
                let large = Measurement(section: Self.section, name: "get, \(largeCount.formatted()) credentials stored, \(label)",
                                        summary: try measure(helper, backend: backend, label: label, count: largeCount))
                report.add(FileBackendSection.withRatioTarget(FileBackendSection.compare(large, with: small, target: nil),
                                                              ("<= 1.5x with 1 stored", 1.5)))
            } catch {
                report.skip(Self.section, "git-credential-latchkey get, \(label)", "\(error)")
            }
        }
    }

    /// Stores `count` credentials in a fresh namespace (in-process, through the
    /// same helper code), checks that `get` finds the middle one, and times it.
    private func measure(_ helper: String, backend: Policy.BackendChoice, label: String, count: Int) throws -> Summary {
        let app = "latchkey-bench-git-\(label)-\(count)"
        let vault = try Vault(appID: try AppID(app), backend: backend)
        let git = GitCredentialHelper(vault: vault)
        progress("git scale: storing \(count) credential(s) on the \(label) backend")
        for number in 0..<count {
            var credential = GitCredentialMessage()
            credential.protocolName = "https"
            credential.host = "host-\(number).bench.latchkey.example"
            credential.username = "user-\(number)"
            credential.password = SecretBytes(utf8: "password-\(number)")
            try git.store(credential)
        }
        let wanted = count / 2
        let request = directory + "/git-scale/request-\(label)-\(count)"
        try Data("protocol=https\nhost=host-\(wanted).bench.latchkey.example\n\n".utf8).write(to: URL(fileURLWithPath: request))
        let arguments = [helper, "--app", app, "--backend", label, "get"]
        let check = try Spawn.capture(arguments, input: "protocol=https\nhost=host-\(wanted).bench.latchkey.example\n\n")
        guard check.status == 0, check.output == "username=user-\(wanted)\npassword=password-\(wanted)\n" else {
            throw Spawn.Failure(description: "git-credential-latchkey get did not find the stored credential (exit \(check.status)): \(check.error)")
        }
        return try Spawn.time(runs, arguments, stdin: request)
    }
}
