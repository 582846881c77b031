import Foundation
import Synchronization

/// Four clients write through the agent for `seconds` while the agent is killed
/// with SIGKILL at random moments (20 to 300 ms apart); each command that finds
/// no agent starts one, one the agent never accepted runs in-process, and one whose
/// answer is lost after the agent took it is reported (exit 75), never run twice. At the end
/// every session holds its last acknowledged value or a later one that was sent
/// (a write whose answer was lost may have landed), and every audit trail verifies,
/// read by in-process commands.
///
/// `slowed`: instead of being killed, the agent is stopped (SIGSTOP) for 0.2 to 2 s
/// at random and let go on (SIGCONT); each client gives up on a put after 1.5 s
/// (killed, as `timeout` does) and sends it again, so requests whose client left pile
/// up in the stopped agent. After every acknowledged put an in-process read must find
/// that value or a later one sent: a late copy of a put its client gave up on never
/// reverts a newer one.
struct AgentStress {
    let directory: String
    let seconds: Int
    var slowed = false

    /// Returns (passed, failed): one check per session, one per audit trail.
    func run() throws -> (passed: Int, failed: Int) {
        let latchkey = try ChildProcess.sibling("latchkey")
        let runtime = directory + (slowed ? "/agent-slowed-runtime" : "/agent-stress-runtime")
        let store = directory + (slowed ? "/agent-slowed-store" : "/agent-stress-store")
        for path in [runtime, store] {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let agent = ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": "on"]
        let inProcess = ["XDG_RUNTIME_DIR": runtime, "LATCHKEY_AGENT": "off"]
        let hasSecretService = WholeProcessSection.secretServiceRunning()
        // Two clients per namespace, so the agent serves two writers of each at once.
        let clients: [(app: String, backend: String, name: String)] = (0..<4).map { index in
            let backend = index < 2 || !hasSecretService ? "file" : "secret-service"
            return ("agent-\(slowed ? "slowed" : "stress")-\(backend)", backend, "client\(index)")
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        let state = Mutex<
            (acknowledged: [Int], sent: [Int], kills: Int, lost: Int, gaveUp: Int, reads: Int, failures: [String])
        >((Array(repeating: 0, count: 4), Array(repeating: 0, count: 4), 0, 0, 0, 0, []))
        let timeout = slowed ? Spawn.which("timeout") : nil
        let group = DispatchGroup()
        for (index, client) in clients.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var value = 0
                var retrying = false
                while ContinuousClock.now < deadline {
                    if !retrying { value += 1 }
                    retrying = false
                    state.withLock { $0.sent[index] = value }
                    let arguments = [
                        latchkey, "--store-dir", store, "--app", client.app, "--backend", client.backend, "session",
                        "put", client.name,
                    ]
                    let patient = timeout.map { [$0, "-s", "KILL", "1.5"] + arguments } ?? arguments
                    guard let put = try? Spawn.capture(patient, input: "value-\(value)", environment: agent) else {
                        continue
                    }
                    if put.status == 0 {
                        state.withLock { $0.acknowledged[index] = value }
                        guard slowed else { continue }
                        // Read back in-process: a late copy of an earlier put must never have landed over it.
                        let read = try? Spawn.capture(
                            [
                                latchkey, "--store-dir", store, "--app", client.app, "--backend", client.backend,
                                "session", "get", client.name,
                            ], environment: inProcess)
                        let stored =
                            read.flatMap {
                                Int($0.output.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("value-".count))
                            } ?? -1
                        state.withLock {
                            $0.reads += 1
                            if stored < value || stored > $0.sent[index] {
                                $0.failures.append(
                                    "\(client.name) read \(stored) right after put \(value) was acknowledged: a write was reverted"
                                )
                            }
                        }
                    } else if timeout != nil && [9, 128 + 9].contains(put.status) {
                        // This client gave up (killed after 1.5 s; Process reports the signal): it sends the same put again.
                        state.withLock { $0.gaveUp += 1 }
                        retrying = true
                    } else if put.status == 75 && put.error.contains("its answer was lost") {
                        // Not acknowledged: the agent died after it took the put, which may have landed.
                        state.withLock { $0.lost += 1 }
                    } else {
                        state.withLock {
                            $0.failures.append("\(client.name) put \(value) exited \(put.status): \(put.error)")
                        }
                    }
                }
            }
        }
        var generator = SystemRandomNumberGenerator()
        while ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: Double.random(in: slowed ? 0.1...0.5 : 0.02...0.3, using: &generator))
            let status = try? Spawn.capture([latchkey, "--json", "agent", "status"], environment: agent)
            if let data = status?.output.data(using: .utf8),
                let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let pid = (document["pid"] as? NSNumber)?.int32Value, pid > 0
            {
                if slowed {
                    Spawn.stop(pid, for: Double.random(in: 0.2...2, using: &generator))
                } else {
                    Spawn.killNow(pid)
                }
                state.withLock { $0.kills += 1 }
            }
        }
        group.wait()
        _ = try? Spawn.capture([latchkey, "agent", "stop"], environment: agent)

        var passed = 0
        var failed = 0
        func check(_ ok: Bool, _ problem: @autoclosure () -> String) {
            if ok {
                passed += 1
            } else {
                failed += 1
                FileHandle.standardError.write(Data("agent: \(problem())\n".utf8))
            }
        }
        let final = state.withLock { $0 }
        for failure in final.failures { check(false, failure) }
        for (index, client) in clients.enumerated() {
            let read = try Spawn.capture(
                [
                    latchkey, "--store-dir", store, "--app", client.app, "--backend", client.backend, "session", "get",
                    client.name,
                ], environment: inProcess)
            let stored =
                Int(read.output.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("value-".count)) ?? -1
            check(
                read.status == 0 && stored >= final.acknowledged[index] && stored <= final.sent[index],
                "\(client.name) holds \(read.output.debugDescription) (exit \(read.status)); last acknowledged \(final.acknowledged[index]), last sent \(final.sent[index])"
            )
        }
        for app in Set(clients.map(\.app)) {
            let backend = clients.first { $0.app == app }!.backend
            let verify = try Spawn.capture(
                [latchkey, "--store-dir", store, "--app", app, "--backend", backend, "audit", "verify"],
                environment: inProcess)
            check(verify.status == 0, "the audit trail of \(app) does not verify: \(verify.output)\(verify.error)")
        }
        if slowed {
            print(
                "agent-slowed: 4 clients for \(seconds) s, \(final.acknowledged.reduce(0, +)) acknowledged writes, agent stopped \(final.kills) times (0.2 to 2 s each), \(final.gaveUp) puts given up after 1.5 s and sent again, \(final.lost) answers lost and reported, \(final.reads) read-backs; "
                    + "no acknowledged write lost or reverted, and every audit trail verifies: \(failed == 0)"
            )
        } else {
            print(
                "agent: 4 clients for \(seconds) s, \(final.acknowledged.reduce(0, +)) acknowledged writes, agent killed \(final.kills) times, \(final.lost) answers lost and reported; "
                    + "every session holds its last acknowledged value or a later one sent, and every audit trail verifies: \(failed == 0)"
            )
        }
        return (passed, failed)
    }
}
