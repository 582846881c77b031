import Foundation
import Latchkey
import CredentialHelpers

/// Issue 16: what one `git-credential-latchkey get` costs (whole process) with
/// one git credential stored in the namespace and with 1,000 (each on its own
/// host), on each backend. `get` reads the index of the request's host and the
/// sessions it names, so the second figure should stay within 1.5x the first.
///
/// Each figure is also measured with a policy that turns auditing off: every
/// audited read moves the trail's anchor, an item write, and gnome-keyring
/// rewrites its whole keyring file on each write, so on the Secret Service the
/// audited figure grows with everything the keyring holds (whoever stored it),
/// while the figure without auditing shows Latchkey's lookup alone.
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
                let policy = try noAuditPolicy()
                let small = try measure(helper, backend: backend, label: label, count: 1, noAuditPolicy: policy)
                let large = try measure(helper, backend: backend, label: label, count: largeCount, noAuditPolicy: policy)
                for (audited, suffix) in [(true, ""), (false, ", auditing off")] {
                    let one = report.add(Self.section, "get, 1 credential stored, \(label)\(suffix)", audited ? small.audited : small.unaudited)
                    let many = Measurement(section: Self.section, name: "get, \(largeCount.formatted()) credentials stored, \(label)\(suffix)",
                                           summary: audited ? large.audited : large.unaudited)
                    report.add(FileBackendSection.withRatioTarget(FileBackendSection.compare(many, with: one, target: nil),
                                                                  ("<= 1.5x with 1 stored", 1.5)))
                }
            } catch {
                report.skip(Self.section, "git-credential-latchkey get, \(label)", "\(error)")
            }
        }
    }

    /// The default policy with auditing off, as a file for `--policy`.
    private func noAuditPolicy() throws -> String {
        let path = directory + "/git-scale/no-audit.json"
        let json = """
            {"version": 1, "name": "bench-no-audit", "username": {"remember": true},
             "sessions": {"maxAgeSeconds": 2592000, "wipeOnExit": false},
             "onLogout": {"sessions": "wipe", "username": "keep"},
             "backend": {"kind": "auto", "allowFileFallback": true, "migrateToSecretService": true, "secretServiceTimeoutMilliseconds": 3000},
             "file": {"keySource": "keyfile"}, "audit": {"enabled": false}}
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Stores `count` credentials in a fresh namespace (in-process, through the
    /// same helper code, without auditing so that filling the keyring takes fewer
    /// writes), checks that `get` finds the middle one, and times it with the
    /// default policy and with auditing off.
    private func measure(_ helper: String, backend: Policy.BackendChoice, label: String, count: Int,
                         noAuditPolicy: String) throws -> (audited: Summary, unaudited: Summary) {
        let app = "latchkey-bench-git-\(label)-\(count)"
        let vault = try Vault.open(appID: try AppID(app), policy: try Policy(contentsOfFile: noAuditPolicy), backend: backend)
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
        let arguments = [helper, "--app", app, "--backend", label]
        for policy in [[], ["--policy", noAuditPolicy]] {
            let check = try Spawn.capture(arguments + policy + ["get"], input: "protocol=https\nhost=host-\(wanted).bench.latchkey.example\n\n")
            guard check.status == 0, check.output == "username=user-\(wanted)\npassword=password-\(wanted)\n" else {
                throw Spawn.Failure(description: "git-credential-latchkey get did not find the stored credential (exit \(check.status)): \(check.error)")
            }
        }
        return (try Spawn.time(runs, arguments + ["get"], stdin: request),
                try Spawn.time(runs, arguments + ["--policy", noAuditPolicy, "get"], stdin: request))
    }
}
