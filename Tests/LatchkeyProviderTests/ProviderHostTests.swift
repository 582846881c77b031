import Foundation
import LatchkeyTestSupport
import Testing

/// "It never takes over a desktop", and enabling it (docs/SECRET-SERVICE-PROVIDER.md): what
/// `latchkey status` says of the provider on the bus, the agent declining a bus that can activate
/// another provider, the policy's `agent.serveSecretService`, and `agent enable-secret-service`.
@Suite("the Secret Service provider on a host: status, activation, enabling", .sandboxed)
struct ProviderHostTests {
    /// `latchkey --json status` on `bus` (the file backend: the store is not what is looked at), its
    /// `secretServiceProvider` object.
    private func providerInStatus(_ bus: ProviderBus) throws -> [String: Any]? {
        let status = try bus.run(try latchkeyPath(), ["--backend", "file", "--json", "status"])
        #expect(status.status == 0, "\(status.stderr)")
        return try status.json()["secretServiceProvider"] as? [String: Any]
    }

    @Test("status says which provider owns org.freedesktop.secrets, by its executable, and whether one is activatable")
    func statusNamesTheProvider() throws {
        let bus = try ProviderBus()
        let none = try providerInStatus(bus)
        #expect(none?["found"] as? String == "none", "\(String(describing: none))")
        #expect(none?["activatable"] as? Bool == false)
        let text = try bus.run(try latchkeyPath(), ["--backend", "file", "status"])
        #expect(
            text.lines.contains("secret service provider: none; the bus cannot activate a provider"), "\(text.text)")

        let pid = try bus.startAgent()
        let latchkey = try providerInStatus(bus)
        #expect(latchkey?["found"] as? String == "latchkey", "\(String(describing: latchkey))")
        #expect(latchkey?["name"] as? String == "Latchkey's own provider")
        #expect(latchkey?["pid"] as? Int == Int(pid))
        #expect(latchkey?["executable"] as? String == (try latchkeyPath()))

        let activatable = try ProviderBus(otherProvider: true)
        #expect(try providerInStatus(activatable)?["activatable"] as? Bool == true)
    }

    @Test("status names gnome-keyring when it owns the name", .needsSecretService)
    func statusNamesGnomeKeyring() throws {
        let keyring = try KeyringDaemon.pid()
        let status = try latchkey(["--backend", "file", "--json", "status"])
        #expect(status.status == 0, "\(status.stderr)")
        let found = try status.json()["secretServiceProvider"] as? [String: Any]
        #expect(found?["found"] as? String == "gnome-keyring", "\(String(describing: found))")
        #expect(found?["pid"] as? Int == Int(keyring))
        let text = try latchkey(["--backend", "file", "status"])
        #expect(text.text.contains("secret service provider: gnome-keyring (pid \(keyring), "), "\(text.text)")
    }

    @Test("the agent does not serve a bus that can activate another provider, and says so")
    func declinesActivatableProvider() throws {
        let bus = try ProviderBus(otherProvider: true)
        let shell = try runProgram(
            "sh", ["-c", #""$0" agent run --secret-service </dev/null >/dev/null 2>&1 &"#, try latchkeyPath()],
            environment: bus.environment)
        #expect(shell.status == 0)
        let end = Date(timeIntervalSinceNow: 30)
        while Date() < end && !bus.agentLog().contains("secret service:") { Thread.sleep(forTimeInterval: 0.05) }
        #expect(
            bus.agentLog().contains("can activate another provider of org.freedesktop.secrets"), "\(bus.agentLog())")
        #expect(try bus.ownerProcessID() == nil, "nobody took the name")
    }

    @Test("agent.serveSecretService makes the agent a command starts serve the Secret Service")
    func policyServes() throws {
        let bus = try ProviderBus(policy: #"{"version": 1, "name": "serving", "agent": {"serveSecretService": true}}"#)
        // Any store command starts an agent when none runs (LATCHKEY_AGENT unset).
        let started = try runProgram(
            try latchkeyPath(), ["--backend", "file", "status"],
            environment: bus.environment.merging(["LATCHKEY_AGENT": nil]) { $1 })
        #expect(started.status == 0, "\(started.stderr)")
        let end = Date(timeIntervalSinceNow: 30)
        var owner: pid_t?
        while Date() < end, owner == nil {
            owner = try bus.ownerProcessID()
            if owner == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(owner != nil, "the started agent took the name: \(bus.agentLog())")
        let store = try bus.run("secret-tool", ["store", "--label=by policy", "service", "policy"], input: "served")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "policy"]).text == "served")
    }

    @Test("an agent whose provider owns the name does not exit when idle; one whose provider declined it does")
    func idleExitOnlyWithoutTheName() throws {
        let policy = #"{"version": 1, "name": "idle", "agent": {"serveSecretService": true, "idleExitSeconds": 1}}"#
        func start(_ bus: ProviderBus) throws {
            let shell = try runProgram(
                "sh", ["-c", #""$0" agent run </dev/null >/dev/null 2>&1 &"#, try latchkeyPath()],
                environment: bus.environment)
            #expect(shell.status == 0)
        }
        // One after the other: both agents' runtime directory is the test's.
        let declining = try ProviderBus(policy: policy, otherProvider: true)
        try start(declining)
        var end = Date(timeIntervalSinceNow: 30)
        while Date() < end, !declining.agentLog().contains("stopping: no request came") {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(declining.agentLog().contains("not serving the Secret Service"), "\(declining.agentLog())")
        #expect(declining.agentLog().contains("stopping: no request came"), "\(declining.agentLog())")

        let serving = try ProviderBus(policy: policy)
        let before = serving.agentLog()
        try start(serving)
        end = Date(timeIntervalSinceNow: 30)
        while Date() < end, try serving.ownerProcessID() == nil { Thread.sleep(forTimeInterval: 0.05) }
        let owner = try #require(try serving.ownerProcessID(), "\(serving.agentLog())")
        Thread.sleep(forTimeInterval: 3)
        #expect(try serving.ownerProcessID() == owner, "\(serving.agentLog())")
        let log = String(serving.agentLog().dropFirst(before.count))
        #expect(!log.contains("stopping:"), "idle three times its idle exit, still serving: \(log)")
    }

    @Test(
        "agent enable-secret-service writes the unit and activation file; the bus then starts Latchkey for secret-tool; disable removes them"
    )
    func enableAndDisable() throws {
        let bus = try ProviderBus()
        let path = try latchkeyPath()
        let enabled = try bus.run(path, ["--json", "agent", "enable-secret-service"])
        #expect(enabled.status == 0, "\(enabled.stderr)")
        let unitPath = bus.config + "/systemd/user/latchkey-secret-service.service"
        let activationPath = bus.data + "/dbus-1/services/org.freedesktop.secrets.service"
        #expect(try enabled.json()["unit"] as? String == unitPath)
        #expect(try enabled.json()["activationFile"] as? String == activationPath)
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        for line in ["Type=dbus", "BusName=org.freedesktop.secrets", "ExecStart=\(path) agent run --secret-service"] {
            #expect(unit.split(separator: "\n").contains(Substring(line)), "\(unit)")
        }
        let activation = try String(contentsOfFile: activationPath, encoding: .utf8)
        for line in [
            "[D-BUS Service]", "Name=org.freedesktop.secrets", "Exec=\(path) agent run --secret-service",
            "SystemdService=latchkey-secret-service.service",
        ] {
            #expect(activation.split(separator: "\n").contains(Substring(line)), "\(activation)")
        }
        #expect(try bus.ownerProcessID() == nil, "enabling starts nothing")

        // No agent started by hand: secret-tool's call makes the bus start the one the activation file names.
        let store = try bus.run("secret-tool", ["store", "--label=activated", "service", "activated"], input: "kept")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "activated"]).text == "kept")
        let owner = try #require(try bus.ownerProcessID())
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(owner)/exe") == path)

        let disabled = try bus.run(path, ["--json", "agent", "disable-secret-service"])
        #expect(disabled.status == 0, "\(disabled.stderr)")
        #expect(try disabled.json()["removed"] as? [String] == [activationPath, unitPath])
        #expect(
            !FileManager.default.fileExists(atPath: unitPath) && !FileManager.default.fileExists(atPath: activationPath)
        )
        #expect(try bus.run(path, ["agent", "stop"]).status == 0)
        let end = Date(timeIntervalSinceNow: 10)
        while Date() < end, try bus.ownerProcessID() != nil { Thread.sleep(forTimeInterval: 0.05) }
        let lookup = try bus.run("secret-tool", ["lookup", "service", "activated"])
        #expect(lookup.status != 0 && lookup.text.isEmpty, "nothing is activated any more: \(lookup.text)")
        #expect(try bus.ownerProcessID() == nil)
    }

    @Test("enabling stops an agent that does not serve the bus; the agent a command starts next serves it")
    func enableStopsAnAgentThatDoesNotServe() throws {
        let bus = try ProviderBus()
        let path = try latchkeyPath()
        let shell = try runProgram(
            "sh", ["-c", #""$0" agent run </dev/null >/dev/null 2>&1 &"#, path], environment: bus.environment)
        #expect(shell.status == 0)
        func agentPID() throws -> Int? {
            let status = try bus.run(path, ["--json", "agent", "status"])
            return status.status == 0 ? try status.json()["pid"] as? Int : nil
        }
        var end = Date(timeIntervalSinceNow: 30)
        while Date() < end, try agentPID() == nil { Thread.sleep(forTimeInterval: 0.05) }
        let first = try #require(try agentPID())
        #expect(try bus.ownerProcessID() == nil, "an agent run without --secret-service does not serve the bus")

        let enabled = try bus.run(path, ["--json", "agent", "enable-secret-service"])
        #expect(enabled.status == 0, "\(enabled.stderr)")
        #expect(try enabled.json()["stoppedAgent"] as? Bool == true)
        end = Date(timeIntervalSinceNow: 30)
        while Date() < end, try agentPID() == first { Thread.sleep(forTimeInterval: 0.05) }

        let started = try runProgram(
            path, ["--backend", "file", "status"], environment: bus.environment.merging(["LATCHKEY_AGENT": nil]) { $1 })
        #expect(started.status == 0, "\(started.stderr)")
        end = Date(timeIntervalSinceNow: 30)
        while Date() < end, try bus.ownerProcessID() == nil { Thread.sleep(forTimeInterval: 0.05) }
        let second = try #require(try agentPID())
        #expect(second != first)
        #expect(try bus.ownerProcessID().map(Int.init) == second, "the new agent serves the bus: \(bus.agentLog())")
        let store = try bus.run("secret-tool", ["store", "--label=enabled", "service", "enabled"], input: "yes")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "enabled"]).text == "yes")
    }

    @Test(
        "enable-secret-service refuses (73, nothing written) when another provider can be activated or its file is in the way"
    )
    func enableRefuses() throws {
        let path = try latchkeyPath()
        let activatable = try ProviderBus(otherProvider: true)
        let refused = try activatable.run(path, ["agent", "enable-secret-service"])
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("can activate another provider of org.freedesktop.secrets"), "\(refused.stderr)")
        #expect(
            !FileManager.default.fileExists(
                atPath: activatable.config + "/systemd/user/latchkey-secret-service.service"))
        #expect(!FileManager.default.fileExists(atPath: activatable.data + "/dbus-1/services"))

        let bus = try ProviderBus()
        let services = bus.data + "/dbus-1/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        let theirs = "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/usr/bin/keepassxc\n"
        try theirs.write(toFile: services + "/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        let inTheWay = try bus.run(path, ["agent", "enable-secret-service"])
        #expect(inTheWay.status == 73, "\(inTheWay.stderr)")
        let disabled = try bus.run(path, ["--json", "agent", "disable-secret-service"])
        #expect(try disabled.json()["removed"] as? [String] == [])
        #expect(try String(contentsOfFile: services + "/org.freedesktop.secrets.service", encoding: .utf8) == theirs)
    }

    @Test(
        "an app of Latchkey's library that finds Latchkey's provider keeps its namespace in its own file: one entry per operation in its trail, nothing in the provider's vault"
    )
    func libraryUsesItsFileDirectly() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let path = try latchkeyPath()
        let app = ["--store-dir", try freshDirectory("app"), "--app", "com.example.direct"]
        let put = try bus.run(path, app + ["secret", "put", "token"], input: "direct-value")
        #expect(put.status == 0, "\(put.stderr)")
        let get = try bus.run(path, app + ["secret", "get", "token"])
        #expect(get.text == "direct-value\n", "\(get.stderr)")
        let status = try bus.run(path, app + ["--json", "status"])
        #expect(try status.json()["backend"] as? String == "file", "\(status.text)")
        #expect((try status.json()["reason"] as? String)?.contains("Latchkey's own Secret Service provider") == true)
        let trail = try bus.run(path, app + ["audit", "show"]).lines
        #expect(trail.filter { $0.contains("\tsecret.saved\t") }.count == 1, "\(trail)")
        #expect(trail.filter { $0.contains("\tsecret.read\t") }.count == 1, "\(trail)")
        let provider = try bus.providerAudit("show")
        // Only the provider's own entries (its load, its collection): no client's read or write of an item.
        #expect(
            !provider.lines.contains {
                $0.contains(" write /org/freedesktop/") || $0.contains(" read /org/freedesktop/")
            },
            "\(provider.text)")
        let search = try bus.run("secret-tool", ["search", "--all", "xdg:schema", "io.github.latchkey.Item"])
        #expect(search.text.isEmpty && search.stderr.isEmpty, "no item of the app in the provider: \(search.text)")
    }

    @Test(
        "a namespace that has items in Latchkey's provider keeps using the Secret Service: no acknowledged write is lost"
    )
    func namespaceWithItemsKeepsTheSecretService() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let path = try latchkeyPath()
        let app = ["--store-dir", try freshDirectory("app"), "--app", "com.example.kept"]
        let required = try freshDirectory("policy") + "/required.json"
        try #"{"version": 1, "name": "required", "backend": {"kind": "secret-service"}}"#
            .write(toFile: required, atomically: true, encoding: .utf8)
        let put = try bus.run(path, app + ["--policy", required, "secret", "put", "token"], input: "in-the-provider")
        #expect(put.status == 0, "\(put.stderr)")
        let status = try bus.run(path, app + ["--json", "status"])
        #expect(try status.json()["backend"] as? String == "secret-service", "\(status.text)")
        #expect(try bus.run(path, app + ["secret", "get", "token"]).text == "in-the-provider\n")
    }
}
