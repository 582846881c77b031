import Foundation
import Latchkey
import LatchkeyCredentialHelpers

/// Issue 16: what one `git-credential-latchkey get` costs (whole process) with
/// one git credential stored in the namespace and with 1,000 (each on its own
/// host), on each backend. `get` reads the index of the request's host and the
/// sessions it names, so the second figure should stay within 1.5x the first.
///
/// The figure with one is taken before the 1,000 are stored, and again after,
/// timed in turn with the 1,000 (one run of each, round after round), so that
/// a change in the machine's load moves both alike; on the Secret Service the
/// second figure with one also shows what the keyring's own growth (the
/// 1,000 credentials of the other namespace) costs every lookup.
///
/// Each figure is also measured with a policy that turns auditing off, which
/// shows Latchkey's lookup without the audit append (an `fsync` of the trail
/// and an `fdatasync` of its anchor per audited read).
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
                report.skip(
                    Self.section, "git-credential-latchkey get, \(label)", "no Secret Service on the session bus")
                continue
            }
            do {
                let policy = try noAuditPolicy()
                // On the Secret Service, a plain `secret-tool lookup` of the harness's own
                // item is timed alongside: how much the keyring's growth costs any client.
                let peer = backend == .secretService ? secretToolLookup() : nil
                let small = try store(helper, backend: backend, label: label, count: 1, noAuditPolicy: policy)
                let alone = try Spawn.timeInTurn(runs, [small.audited, small.unaudited] + (peer.map { [$0] } ?? []))
                let large = try store(helper, backend: backend, label: label, count: largeCount, noAuditPolicy: policy)
                let inTurn = try Spawn.timeInTurn(
                    runs, [small.audited, large.audited, small.unaudited, large.unaudited] + (peer.map { [$0] } ?? []))
                let many = "\(largeCount.formatted()) credentials stored"
                if peer != nil {
                    let before = report.add(
                        Self.section, "secret-tool lookup, before the \(many) (the keyring's own cost)", alone[2])
                    let after = Measurement(
                        section: Self.section, name: "secret-tool lookup, after the \(many), in turn with them",
                        summary: inTurn[4])
                    report.add(FileBackendSection.compare(after, with: before, target: nil))
                }
                for (offset, suffix) in [(0, ""), (1, ", auditing off")] {
                    let one = report.add(Self.section, "get, 1 credential stored, \(label)\(suffix)", alone[offset])
                    let oneAgain = Measurement(
                        section: Self.section, name: "get, 1 stored, again, in turn with \(many), \(label)\(suffix)",
                        summary: inTurn[2 * offset])
                    report.add(FileBackendSection.compare(oneAgain, with: one, target: nil))
                    let large = Measurement(
                        section: Self.section, name: "get, \(many), \(label)\(suffix)", summary: inTurn[2 * offset + 1])
                    report.add(
                        FileBackendSection.withRatioTarget(
                            FileBackendSection.compare(large, with: one, target: nil),
                            ("<= 1.5x with 1 stored", 1.5)))
                    var sameState = large
                    sameState.name = "get, \(many), against 1 stored timed in turn, \(label)\(suffix)"
                    report.add(FileBackendSection.compare(sameState, with: oneAgain, target: nil))
                }
            } catch {
                report.skip(Self.section, "git-credential-latchkey get, \(label)", "\(error)")
            }
        }
    }

    /// `secret-tool lookup latchkey-harness ready` (the item `.ci/with-keyring`
    /// stores), when secret-tool is installed and finds it; else nil.
    private func secretToolLookup() -> Spawn.Command? {
        guard let tool = Spawn.which("secret-tool") else { return nil }
        let arguments = [tool, "lookup", "latchkey-harness", "ready"]
        guard let check = try? Spawn.capture(arguments), check.status == 0 else { return nil }
        return Spawn.Command(arguments: arguments, stdin: nil)
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
    /// writes) and checks that `get` finds the middle one, with the default
    /// policy and with auditing off.
    /// - Returns: The two `get` commands to time, each with its request on standard input.
    private func store(
        _ helper: String, backend: Policy.BackendChoice, label: String, count: Int, noAuditPolicy: String
    )
        throws -> (audited: Spawn.Command, unaudited: Spawn.Command)
    {
        let app = "latchkey-bench-git-\(label)-\(count)"
        let vault = try Vault.open(
            appID: try AppID(app), policy: try Policy(contentsOfFile: noAuditPolicy), backend: backend)
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
        try Data("protocol=https\nhost=host-\(wanted).bench.latchkey.example\n\n".utf8).write(
            to: URL(fileURLWithPath: request))
        let arguments = [helper, "--app", app, "--backend", label]
        for policy in [[], ["--policy", noAuditPolicy]] {
            let check = try Spawn.capture(
                arguments + policy + ["get"], input: "protocol=https\nhost=host-\(wanted).bench.latchkey.example\n\n")
            guard check.status == 0, check.output == "username=user-\(wanted)\npassword=password-\(wanted)\n" else {
                throw Spawn.Failure(
                    description:
                        "git-credential-latchkey get did not find the stored credential (exit \(check.status)): \(check.error)"
                )
            }
        }
        return (
            Spawn.Command(arguments: arguments + ["get"], stdin: request),
            Spawn.Command(arguments: arguments + ["--policy", noAuditPolicy, "get"], stdin: request)
        )
    }
}
