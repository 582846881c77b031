import Foundation

/// Migration with provider loss (issue 34): in each round a brand-new namespace is written to
/// the encrypted file (three sessions), migrated into the Secret Service by the next command,
/// and then, by turns: another Secret Service client deletes one session (`secret-tool
/// clear`); the provider loses every value the migration wrote (the copies, their
/// confirmation, the trail key and the pseudonym key, emptied through `secret-tool` as
/// kwalletd5 killed within 5 s of a change leaves them); or both, the loss first (then a
/// command, which copies again), then the deletion. Then
/// every session is read, in-process, in a new process each time. Counted:
/// - resurrected: a session deleted by the other client read back;
/// - lost: a session not deleted that does not read back with its value;
/// - bricked: a round in which a later command (`status`, a read, `audit reset --yes`,
///   `wipe --yes`) exits 65, or any command exits other than as expected.
struct MigrationStress {
    let directory: String
    let rounds: Int

    func run() throws -> (passed: Int, failed: Int) {
        let latchkey = try ChildProcess.sibling("latchkey")
        guard Spawn.which("secret-tool") != nil else {
            throw Spawn.Failure(description: "migration: secret-tool is needed (Debian package libsecret-tools)")
        }
        let store = directory + "/migration-store"
        try FileManager.default.createDirectory(
            atPath: store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let inProcess = ["LATCHKEY_AGENT": "off"]
        var (resurrected, lost, bricked, passed, failed) = (0, 0, 0, 0, 0)
        var (deletionRounds, lossRounds) = (0, 0)
        let names = ["s0", "s1", "s2"]
        for round in 0..<rounds {
            let app = "migration-stress-\(round)"
            let options = [latchkey, "--store-dir", store, "--app", app]
            var problems: [String] = []
            func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
                let result = try Spawn.capture(options + arguments, input: input, environment: inProcess)
                if result.status == 65 {
                    problems.append("\(arguments.joined(separator: " ")) exited 65 (\(result.error.prefix(300)))")
                }
                return (result.status, result.output)
            }
            var tokens: [String: String] = [:]
            for name in names {
                let token = "tok-\(round)-\(name)-\(UInt32.random(in: 0...UInt32.max))"
                tokens[name] = token
                let put = try run(["--backend", "file", "session", "put", name], input: token)
                if put.status != 0 { problems.append("put \(name) exited \(put.status)") }
            }
            // The first command on the Secret Service migrates; the file is kept.
            let first = try run(["session", "get", "s0"])
            if first.output != tokens["s0"]! + "\n" { problems.append("the migrating read gave \(first.status)") }
            let deletes = round % 3 != 1
            let loses = round % 3 != 0
            deletionRounds += deletes ? 1 : 0
            lossRounds += loses ? 1 : 0
            if loses {
                // Everything the migration wrote, as kwalletd5 killed 1 s later loses it.
                for (kind, name) in names.map({ ("session", $0) }) + [
                    ("setting", "migration.confirmation"), ("key", "audit.secret-service"), ("key", "pseudonym"),
                ] {
                    try loseValue(app: app, kind: kind, name: name)
                }
                // The next command repairs the namespace and copies the sessions again from the file.
                if try run(["status"]).status != 0 { problems.append("status after the loss failed") }
            }
            if deletes {
                _ = try Spawn.capture(["secret-tool", "clear", "app", app, "kind", "session", "name", "s1"])
            }
            if try run(["status"]).status != 0 { problems.append("status failed") }
            for name in names {
                let read = try run(["session", "get", name])
                if deletes && name == "s1" {
                    if read.status == 0 {
                        resurrected += 1
                        problems.append("s1, deleted by another client, came back")
                    }
                } else if read.output != tokens[name]! + "\n" {
                    lost += 1
                    problems.append("\(name) read back as exit \(read.status)")
                }
            }
            if try run(["audit", "reset", "--yes"]).status != 0 { problems.append("audit reset failed") }
            if try run(["wipe", "--yes"]).status != 0 { problems.append("wipe failed") }
            if problems.contains(where: { $0.contains("exited 65") }) { bricked += 1 }
            if problems.isEmpty {
                passed += 1
            } else {
                failed += 1
                FileHandle.standardError.write(
                    Data("migration round \(round + 1): \(problems.joined(separator: "; "))\n".utf8))
            }
        }
        print(
            "migration: \(rounds) new namespaces migrated from the file, then another client's deletion (\(deletionRounds) rounds) and the provider losing what the migration wrote (\(lossRounds) rounds); \(resurrected) resurrected, \(lost) lost, \(bricked) bricked"
        )
        return (passed, failed)
    }

    /// Empties the secret of the one item of `app` with `kind` and `name`, keeping the item
    /// (what kwalletd5 stopped within 5 s of a change leaves), through `secret-tool`.
    private func loseValue(app: String, kind: String, name: String) throws {
        let found = try Spawn.capture(["secret-tool", "search", "--all", "app", app, "kind", kind, "name", name])
        // secret-tool prints the attributes on standard error, one `attribute.NAME = VALUE` line each.
        var attributes: [String] = []
        for line in found.error.split(separator: "\n") where line.hasPrefix("attribute.") {
            guard let equals = line.range(of: " = ") else { continue }
            attributes += [
                String(line[line.index(line.startIndex, offsetBy: 10)..<equals.lowerBound]),
                String(line[equals.upperBound...]),
            ]
        }
        guard !attributes.isEmpty else { return }
        let stored = try Spawn.capture(
            ["secret-tool", "store", "--label=lost", "xdg:schema", "io.github.latchkey.Item"] + attributes, input: "")
        guard stored.status == 0 else { throw Spawn.Failure(description: "secret-tool store failed: \(stored.error)") }
    }
}
