import Foundation
import Latchkey
import LatchkeySystem

/// Kill during refresh (docs/ROTATION.md, "Interrupting a refresh"), against
/// `scripts/token-endpoint.py` (rotating refresh tokens, reuse detection, a 200 ms answer,
/// access tokens due at once, so every `session get --refresh-command` refreshes with the
/// refresh token it finds stored). Each round sends one signal (SIGINT, SIGTERM, SIGHUP,
/// SIGKILL in turn) to an in-process `session get --refresh-command curl ...` at a moment
/// spread over the whole refresh (from start-up to past the endpoint's answer), to the
/// command line's process alone: its refresh command runs on in a group of its own, as it
/// does when a terminal, a service manager or the OOM killer ends the command.
/// - SIGINT, SIGTERM, SIGHUP: the command ends by the signal; a rotation the endpoint made
///   is always saved, so the endpoint never sees a refresh token twice (reuse 0).
/// - SIGKILL: counted, not failed: the rounds in which the endpoint rotated and the new
///   grant died with the process (the window docs/ROTATION.md states); the family is then
///   reset so the next round starts clean.
struct KillRefreshStress {
    let directory: String
    let rounds: Int

    private static let signals: [(name: String, signal: POSIX.Signal)] = [
        ("SIGINT", .interrupt), ("SIGTERM", .terminate), ("SIGHUP", .hangUp), ("SIGKILL", .kill),
    ]

    func run() throws -> (passed: Int, failed: Int) {
        let latchkey = try ChildProcess.sibling("latchkey")
        let runtime = directory + "/kill-refresh-runtime"
        let store = directory + "/kill-refresh-store"
        for path in [runtime, store] {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let endpoint = try RotationStress.Endpoint(directory: directory, expiresIn: 0)
        defer { endpoint.stop() }
        let options = [latchkey, "--store-dir", store, "--app", "kill-refresh-stress", "--backend", "file"]
        let inProcess = ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": "off"]
        let get = options + ["session", "get", "s", "--refresh-command", endpoint.refreshCommand]

        func putExpired(_ refresh: String) throws {
            try RotationStress.putExpiredGrant(refreshToken: refresh, options: options, environment: inProcess)
        }

        try putExpired(try endpoint.stats().refreshToken)
        var counts = [String: (rounds: Int, byTheSignal: Int, rotated: Int, lost: Int)]()
        var failed = 0
        var reuse = (caught: 0, killed: 0)
        let latest = (Self.delayMilliseconds + 250) * 1000
        for round in 0..<rounds {
            let signal = Self.signals[round % Self.signals.count]
            let before = try endpoint.stats()
            let pid = try Spawn.startInGroup(
                get, environment: inProcess, output: directory + "/kill-refresh.out",
                errors: directory + "/kill-refresh.err")
            // Spread over start-up, the refresh command's request, the endpoint's answer and the save.
            Spawn.pause(microseconds: UInt32(latest * round / max(1, rounds - 1)))
            POSIX.send(signal.signal, to: pid)
            let status = Spawn.waitForExit(pid)
            // Let an orphaned refresh command finish what it was doing (the endpoint commits when it answers).
            Spawn.pause(microseconds: UInt32((Self.delayMilliseconds + 300) * 1000))
            let after = try endpoint.stats()
            let rotated = after.refreshes > before.refreshes
            // The next refresh presents what was stored: a rotation that was not saved shows as reuse.
            let next = try Spawn.capture(get, environment: inProcess)
            let checked = try endpoint.stats()
            var count = counts[signal.name] ?? (0, 0, 0, 0)
            count.rounds += 1
            if status == 128 + signal.signal.number { count.byTheSignal += 1 }
            if rotated { count.rotated += 1 }
            if checked.reuse > after.reuse || next.status != 0 {
                count.lost += 1
                if signal.signal != .kill {
                    failed += 1
                    progress(
                        "kill-refresh round \(round) (\(signal.name)): the next refresh failed (reuse \(checked.reuse - after.reuse), status \(status)): \(next.error)"
                    )
                }
                try endpoint.reset("kill-refresh-\(round)")
                try putExpired("kill-refresh-\(round)")
                if signal.signal == .kill {
                    reuse.killed += checked.reuse - after.reuse
                } else {
                    reuse.caught += checked.reuse - after.reuse
                }
            }
            counts[signal.name] = count
        }
        for signal in Self.signals {
            let count = counts[signal.name] ?? (0, 0, 0, 0)
            progress(
                "kill-refresh \(signal.name): \(count.rounds) rounds, \(count.byTheSignal) ended by the signal, the endpoint rotated in \(count.rotated), rotation lost (reuse on the next refresh) in \(count.lost)"
            )
        }
        progress(
            "kill-refresh: refresh tokens presented twice after SIGINT, SIGTERM or SIGHUP: \(reuse.caught); after SIGKILL: \(reuse.killed)"
        )
        return (rounds - failed, failed)
    }

    private static let delayMilliseconds = RotationStress.delayMilliseconds
}
