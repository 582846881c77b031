import Foundation
import Latchkey
import LatchkeySystem

/// Token rotation under load (docs/ROTATION.md), against `scripts/token-endpoint.py` on
/// 127.0.0.1 (rotating refresh tokens, reuse detection that revokes the family, a 200 ms
/// answer), with curl as `--refresh-command`:
/// - the storm: `processes` `latchkey session get` at once (half through the agent) on an
///   expired access token, `rounds` times: exactly one refresh per round at the endpoint,
///   no reuse, every process prints the new token;
/// - kills: `killRounds` rounds in which the refreshing process (and its refresh command)
///   is killed at a random moment; the session must survive every round in which the kill
///   came before the endpoint answered or after the save, and the rounds in which it came
///   between the two (the window no client can close) are counted.
struct RotationStress {
    let directory: String
    let processes: Int
    let rounds: Int
    let killRounds: Int

    static let delayMilliseconds = 200

    func run() throws -> (passed: Int, failed: Int) {
        let latchkey = try ChildProcess.sibling("latchkey")
        let runtime = directory + "/rotation-runtime"
        let store = directory + "/rotation-store"
        let outputs = directory + "/rotation-output"
        for path in [runtime, store, outputs] {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let endpoint = try Endpoint(directory: directory)
        defer { endpoint.stop() }
        let options = [latchkey, "--store-dir", store, "--app", "rotation-stress", "--backend", "file"]
        let inProcess = ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": "off"]
        let agent = ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": "on"]
        defer { _ = try? Spawn.capture([latchkey, "agent", "stop"], environment: agent) }
        let get = options + ["session", "get", "s", "--refresh-command", endpoint.refreshCommand]

        func putExpired(_ refresh: String) throws {
            try RotationStress.putExpiredGrant(refreshToken: refresh, options: options, environment: inProcess)
        }

        var passed = 0
        var failed = 0
        let started = ContinuousClock.now
        for round in 1...rounds {
            let before = try endpoint.stats()
            try putExpired(before.refreshToken)
            let pids = try (0..<processes).map { index in
                try Spawn.startInGroup(
                    get, environment: index.isMultiple(of: 2) ? agent : inProcess,
                    output: "\(outputs)/\(index).out", errors: "\(outputs)/\(index).err")
            }
            let statuses = pids.map(Spawn.waitForExit)
            let after = try endpoint.stats()
            let printed = (0..<processes).map {
                (try? String(contentsOfFile: "\(outputs)/\($0).out", encoding: .utf8)) ?? ""
            }
            let everyoneGotIt = zip(statuses, printed).allSatisfy { $0 == 0 && $1 == after.accessToken + "\n" }
            if after.refreshes == before.refreshes + 1, after.reuse == 0, everyoneGotIt {
                passed += 1
            } else {
                failed += 1
                let errors = (0..<processes).compactMap {
                    try? String(contentsOfFile: "\(outputs)/\($0).err", encoding: .utf8)
                }
                progress(
                    "rotation storm round \(round): \(after.refreshes - before.refreshes) refreshes, \(after.reuse) reuse, statuses \(Set(statuses)); \(errors.first { !$0.isEmpty } ?? "")"
                )
                if after.revoked { try endpoint.reset("storm-\(round)") }
            }
        }
        progress(
            "rotation storm: \(rounds) rounds of \(processes) processes (half through the agent) in \(Report.time((ContinuousClock.now - started).seconds)): \(passed) with exactly one refresh, no reuse and every process given the new token"
        )

        var beforeAnswer = 0
        var afterSave = 0
        var lost = 0
        var notSurvived = 0
        for round in 1...killRounds {
            let before = try endpoint.stats()
            try putExpired(before.refreshToken)
            let pid = try Spawn.startInGroup(
                get, environment: inProcess, output: "\(outputs)/kill.out", errors: "\(outputs)/kill.err")
            Spawn.pause(microseconds: UInt32.random(in: 0...UInt32((Self.delayMilliseconds + 150) * 1000)))
            Spawn.killWithChildren(pid)
            _ = Spawn.waitForExit(pid)
            // Let the endpoint finish what it was doing (it commits when it answers).
            Spawn.pause(microseconds: UInt32((Self.delayMilliseconds + 100) * 1000))
            let after = try endpoint.stats()
            let rotated = after.refreshes > before.refreshes
            let stored = try Spawn.capture(options + ["session", "get", "s"], environment: inProcess)
            let saved = rotated && stored.status == 0 && stored.output == after.accessToken + "\n"
            if rotated && !saved {
                // The endpoint rotated, the new grant died with the process: the window of docs/ROTATION.md.
                lost += 1
                try endpoint.reset("kill-\(round)")
                continue
            }
            if saved {
                afterSave += 1
            } else {
                // Nothing rotated: the session must refresh normally now, with no reuse.
                beforeAnswer += 1
                let next = try Spawn.capture(get, environment: inProcess)
                let check = try endpoint.stats()
                guard next.status == 0, check.reuse == before.reuse, next.output == check.accessToken + "\n" else {
                    notSurvived += 1
                    progress(
                        "rotation kill round \(round): killed before the answer, yet the next refresh failed: \(next.error)"
                    )
                    if check.revoked { try endpoint.reset("kill-\(round)") }
                    continue
                }
            }
        }
        passed += killRounds - lost - notSurvived
        failed += notSurvived
        progress(
            "rotation kills: \(killRounds) rounds: the session survived \(beforeAnswer + afterSave - notSurvived) (killed before the endpoint answered: \(beforeAnswer), after the save: \(afterSave)); \(notSurvived) others failed; lost in the window between the answer and the save: \(lost)"
        )
        return (passed, failed)
    }

    /// The token endpoint, a child process of this one.
    /// Stores, as session `s`, a grant whose access token has expired and whose refresh token
    /// is `refreshToken` (`session put s --grant`, with `options` naming the store).
    static func putExpiredGrant(refreshToken: String, options: [String], environment: [String: String]) throws {
        let response =
            #"{"access_token":"stale","token_type":"Bearer","expires_in":0,"refresh_token":"\#(refreshToken)"}"#
        let put = try Spawn.capture(
            options + ["session", "put", "s", "--grant"], input: response, environment: environment)
        guard put.status == 0 else { throw Spawn.Failure(description: "session put --grant failed: \(put.error)") }
    }

    final class Endpoint {
        /// Its process id.
        let processID: Int32
        let port: Int

        struct Stats {
            var refreshes: Int
            var reuse: Int
            var revoked: Bool
            var accessToken: String
            var refreshToken: String
        }

        /// Starts it; `expiresIn` is the `expires_in` of the access tokens it issues (the script's default when nil).
        init(directory: String, expiresIn: Int? = nil) throws {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("scripts/token-endpoint.py").path
            let portFile = directory + "/token-endpoint.port"
            // One an endpoint started earlier in this run left (rotation before kill-refresh) names a closed port.
            try? FileManager.default.removeItem(atPath: portFile)
            let arguments =
                [
                    "python3", script, "--port-file", portFile, "--delay-ms", String(RotationStress.delayMilliseconds),
                ] + (expiresIn.map { ["--expires-in", String($0)] } ?? [])
            processID = try POSIX.Launch(
                "python3", arguments: arguments, searchingPath: true, standardInput: .inherited,
                standardOutput: .inherited, standardError: .inherited
            ).start()
            for _ in 0..<1000 {
                if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) {
                    self.port = port
                    return
                }
                Spawn.pause(microseconds: 10_000)
            }
            POSIX.send(.terminate, to: processID)
            _ = try? POSIX.waitForExit(processID)
            throw Spawn.Failure(description: "the token endpoint (\(script)) did not start")
        }

        var refreshCommand: String {
            "curl -s -X POST --data-urlencode grant_type=refresh_token --data-urlencode refresh_token@- http://127.0.0.1:\(port)/token"
        }

        func stats() throws -> Stats {
            let run = try Spawn.capture(["curl", "-s", "http://127.0.0.1:\(port)/stats"])
            guard let object = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any] else {
                throw Spawn.Failure(description: "the token endpoint's stats are not JSON: \(run.output)")
            }
            return Stats(
                refreshes: object["refreshes"] as? Int ?? -1, reuse: object["reuse"] as? Int ?? -1,
                revoked: object["revoked"] as? Bool ?? true, accessToken: object["access_token"] as? String ?? "",
                refreshToken: object["refresh_token"] as? String ?? "")
        }

        func reset(_ token: String) throws {
            _ = try Spawn.capture([
                "curl", "-s", "-X", "POST", "--data-binary", #"{"reset": "\#(token)"}"#,
                "http://127.0.0.1:\(port)/control",
            ])
        }

        /// Ends it (SIGTERM) and waits for it.
        func stop() {
            POSIX.send(.terminate, to: processID)
            _ = try? POSIX.waitForExit(processID)
        }
    }
}
