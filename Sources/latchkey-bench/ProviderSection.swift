import Foundation

/// The Secret Service provider (issue 36, docs/SECRET-SERVICE-PROVIDER.md) beside
/// gnome-keyring-daemon, in one run: `secret-tool lookup` and `store` against the
/// gnome-keyring of the session bus (`make bench` runs in `.ci/with-keyring`), against
/// Latchkey's agent on a private bus holding 10 items and on another holding 10,000, and
/// `lookup` against a private bus where nobody owns the name (the client's floor: libsecret
/// connecting and being told there is no service). All are timed in turn. A provider's share
/// is its lookup's median minus the floor's. Then the idle agent's RSS and CPU time.
struct ProviderSection {
    static let section = "Secret Service provider (issue 36), secret-tool"
    static let gnomeLookup = "secret-tool lookup, gnome-keyring, 10 items"
    static let latchkeyLookup = "secret-tool lookup, Latchkey's provider, 10 items"
    static let latchkeyLookupLarge = "secret-tool lookup, Latchkey's provider, 10,000 items"
    static let floorLookup = "secret-tool lookup, nobody owns the name (client floor)"
    static let gnomeStore = "secret-tool store, gnome-keyring"
    static let latchkeyStore = "secret-tool store, Latchkey's provider"

    let binDirectory: String
    let directory: String
    let runs: Int
    /// How many items the larger provider holds.
    var largeCount = 10_000

    func run(secretServiceRunning: Bool, into report: inout Report) throws {
        guard secretServiceRunning, Spawn.which("secret-tool") != nil, Spawn.which("dbus-daemon") != nil else {
            report.skip(Self.section, "all", "needs gnome-keyring on the session bus, secret-tool and dbus-daemon")
            return
        }
        let empty = try PrivateBus(directory: directory + "/bus-empty")
        defer { empty.stop() }
        let small = try ProviderAgent(bus: PrivateBus(directory: directory + "/bus-small"), binDirectory: binDirectory)
        defer { small.stop() }
        let large = try ProviderAgent(bus: PrivateBus(directory: directory + "/bus-large"), binDirectory: binDirectory)
        defer { large.stop() }
        let session = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        progress("provider: 10 items in gnome-keyring and in one provider, \(largeCount) in the other")
        try Self.fill(bus: session, count: 10, service: "bench-provider")
        try Self.fill(bus: small.bus.address, count: 10, service: "bench-provider")
        try Self.fill(bus: large.bus.address, count: largeCount, service: "bench-provider")
        let secret = directory + "/provider-secret"
        try Data("bench-provider-secret".utf8).write(to: URL(fileURLWithPath: secret))
        let lookup = ["secret-tool", "lookup", "service", "bench-provider", "n", "7"]
        let store = ["secret-tool", "store", "--label=Bench", "service", "bench-store", "user", "u"]
        for bus in [session, small.bus.address, large.bus.address] {
            let read = try Spawn.capture(lookup, environment: ["DBUS_SESSION_BUS_ADDRESS": bus])
            guard read.status == 0, read.output == "secret7" else {
                throw Spawn.Failure(description: "secret-tool lookup on \(bus) gave \(read.status): \(read.error)")
            }
        }
        let commands: [(String, Spawn.Command)] = [
            (Self.floorLookup, command(lookup, empty.address, expecting: 1)),
            (Self.gnomeLookup, command(lookup, session)),
            (Self.latchkeyLookup, command(lookup, small.bus.address)),
            (Self.latchkeyLookupLarge, command(lookup, large.bus.address)),
            (Self.gnomeStore, command(store, session, stdin: secret)),
            (Self.latchkeyStore, command(store, small.bus.address, stdin: secret)),
        ]
        report.notes.append(
            "provider: each of \(commands.count) secret-tool commands in turn, \(runs) timed runs after 3 untimed; "
                + "gnome-keyring on the session bus, Latchkey's agent (release build) on private buses; load average "
                + Self.loadAverage())
        let summaries = try Spawn.timeInTurn(runs, commands.map(\.1))
        var found: [String: Measurement] = [:]
        for ((name, _), summary) in zip(commands, summaries) {
            found[name] = Measurement(section: Self.section, name: name, summary: summary)
        }
        let floor = found[Self.floorLookup]!
        report.add(floor)
        report.add(FileBackendSection.compare(found[Self.gnomeLookup]!, with: floor, target: nil))
        let gnomeShare = found[Self.gnomeLookup]!.summary.median - floor.summary.median
        let latchkeyShare = found[Self.latchkeyLookup]!.summary.median - floor.summary.median
        report.add(
            FileBackendSection.compare(
                found[Self.latchkeyLookup]!, with: floor,
                target: ("share <= 0.5x gnome-keyring's", latchkeyShare <= 0.5 * gnomeShare)))
        report.add(
            FileBackendSection.withRatioTarget(
                FileBackendSection.compare(
                    found[Self.latchkeyLookupLarge]!, with: found[Self.latchkeyLookup]!, target: nil),
                ("<= 1.5x among 10", 1.5)))
        report.add(found[Self.gnomeStore]!)
        report.add(
            FileBackendSection.withRatioTarget(
                FileBackendSection.compare(found[Self.latchkeyStore]!, with: found[Self.gnomeStore]!, target: nil),
                ("<= 1.0x gnome-keyring", 1.0)))
        report.notes.append(
            String(
                format:
                    "provider share of a lookup (median minus the floor's %@): gnome-keyring %@, Latchkey %@ (%.2fx)",
                Report.time(floor.summary.median), Report.time(gnomeShare), Report.time(latchkeyShare),
                latchkeyShare / gnomeShare))
        if let keyring = Self.ownerProcess(bus: session) {
            report.notes.append(
                "gnome-keyring-daemon beside it: RSS \(ProviderAgent.residentSet(of: keyring) / 1024) KiB")
        }
        for agent in [small, large] {
            let idle = agent.idle(seconds: 5)
            report.notes.append(
                "provider idle, \(agent === small ? 10 : largeCount) items: RSS \(idle.rss / 1024) KiB"
                    + " (target <= 15 MB: \(idle.rss <= 15_000_000 ? "met" : "NOT met")), CPU over 5 s idle "
                    + "\(idle.ticks) clock ticks (target none: \(idle.ticks == 0 ? "met" : "NOT met"))")
        }
    }

    private func command(_ arguments: [String], _ bus: String, stdin: String? = nil, expecting status: Int32 = 0)
        -> Spawn.Command
    {
        Spawn.Command(
            arguments: arguments, stdin: stdin, environment: ["DBUS_SESSION_BUS_ADDRESS": bus], expectedStatus: status)
    }

    /// The process that owns `org.freedesktop.secrets` on `bus`.
    static func ownerProcess(bus: String) -> Int32? {
        let reply = try? Spawn.capture(
            [
                "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets",
            ], environment: ["DBUS_SESSION_BUS_ADDRESS": bus])
        return reply?.output.split(separator: " ").last.flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// The load average (`/proc/loadavg`'s first three fields).
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// Stores `count` items (attributes `service SERVICE` and `n NUMBER`, secret `secretNUMBER`)
    /// in the default collection of the Secret Service on `bus`, from one Python client (GIO's
    /// bindings, as the provider's tests use), one `CreateItem` each.
    static func fill(bus: String, count: Int, service: String) throws {
        let script = """
            from gi.repository import Gio, GLib
            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            S = 'org.freedesktop.Secret.'
            def call(path, interface, method, signature, arguments):
                return bus.call_sync('org.freedesktop.secrets', path, S + interface, method,
                                     GLib.Variant(signature, arguments), None, Gio.DBusCallFlags.NO_AUTO_START,
                                     60000, None).unpack()
            output, session = call('/org/freedesktop/secrets', 'Service', 'OpenSession', '(sv)',
                                   ('plain', GLib.Variant('s', '')))
            for number in range(\(count)):
                properties = {S + 'Item.Label': GLib.Variant('s', 'item %d' % number),
                              S + 'Item.Attributes': GLib.Variant('a{ss}', {'service': '\(service)', 'n': str(number)})}
                call('/org/freedesktop/secrets/aliases/default', 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                     (properties, (session, b'', b'secret%d' % number, 'text/plain'), True))
            """
        let run = try Spawn.capture(["/usr/bin/python3", "-c", script], environment: ["DBUS_SESSION_BUS_ADDRESS": bus])
        guard run.status == 0 else {
            throw Spawn.Failure(description: "filling the Secret Service on \(bus) failed: \(run.error)")
        }
    }
}

/// A private session bus (`dbus-daemon`) whose configuration has no service directory, so
/// nothing is ever activated on it: a name nobody owns stays unowned.
final class PrivateBus {
    let address: String
    private let pid: Int32

    init(directory: String) throws {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        address = "unix:path=" + directory + "/bus"
        let configuration = directory + "/bus.conf"
        try Data(
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.utf8
        ).write(to: URL(fileURLWithPath: configuration))
        pid = try Spawn.startInGroup(
            ["dbus-daemon", "--nofork", "--nopidfile", "--config-file=" + configuration], environment: [:],
            output: directory + "/bus.out", errors: directory + "/bus.err")
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: directory + "/bus") {
            Spawn.pause(microseconds: 20_000)
        }
    }

    /// Whether `name` has an owner on this bus.
    func hasOwner(_ name: String) -> Bool {
        let reply = try? Spawn.capture(
            [
                "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner", "string:" + name,
            ], environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        return reply?.output.contains("boolean true") == true
    }

    func stop() {
        Spawn.killNow(pid)
        _ = Spawn.waitForExit(pid)
    }
}

/// `latchkey agent run --secret-service` serving `bus` from a store of its own.
final class ProviderAgent {
    let bus: PrivateBus
    let pid: Int32

    init(bus: PrivateBus, binDirectory: String) throws {
        self.bus = bus
        let home = bus.address.dropFirst("unix:path=".count).dropLast("/bus".count)
        let runtime = home + "/runtime"
        try FileManager.default.createDirectory(
            atPath: String(runtime), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        pid = try Spawn.startInGroup(
            [binDirectory + "/latchkey", "agent", "run", "--secret-service"],
            environment: [
                "DBUS_SESSION_BUS_ADDRESS": bus.address, "XDG_RUNTIME_DIR": String(runtime),
                "LATCHKEY_HOME": home + "/store", "LATCHKEY_AGENT": "off",
            ], output: home + "/agent.out", errors: home + "/agent.err")
        for _ in 0..<600 where !bus.hasOwner("org.freedesktop.secrets") {
            Spawn.pause(microseconds: 50_000)
        }
        guard bus.hasOwner("org.freedesktop.secrets") else {
            stop()
            throw Spawn.Failure(description: "the agent did not take org.freedesktop.secrets on \(bus.address)")
        }
    }

    /// The agent's resident set (`VmRSS`, bytes) after `seconds` of idleness, and the clock
    /// ticks of CPU time (`utime` + `stime` of `/proc/PID/stat`) it used meanwhile.
    func idle(seconds: Int) -> (rss: Int, ticks: Int) {
        func ticks() -> Int {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // The fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            guard fields.count > 12 else { return -1 }
            return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        }
        Spawn.pause(microseconds: 1_000_000)
        let before = ticks()
        Spawn.pause(microseconds: UInt32(seconds) * 1_000_000)
        let after = ticks()
        return (Self.residentSet(of: pid), after - before)
    }

    /// A process's resident set (`VmRSS` of `/proc/PID/status`), in bytes; -1 when unknown.
    static func residentSet(of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap {
            $0.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return (rss ?? -1) * 1024
    }

    func stop() {
        Spawn.killWithChildren(pid)
        _ = Spawn.waitForExit(pid)
        bus.stop()
    }
}

extension ProviderSection {
    /// `make stress`'s `provider` part: fills a provider with `items` items from one client,
    /// then checks that a search finds them all (through the index), that `secret-tool lookup`
    /// reads one, and that after a SIGKILL a new agent serves them all again.
    /// - Returns: The checks passed and failed.
    static func stress(binDirectory: String, directory: String, items: Int) throws -> (passed: Int, failed: Int) {
        var agent = try ProviderAgent(bus: PrivateBus(directory: directory + "/bus-stress"), binDirectory: binDirectory)
        defer { agent.stop() }
        let started = ContinuousClock.now
        try fill(bus: agent.bus.address, count: items, service: "stress")
        progress("provider: \(items) items stored in \(Report.time((ContinuousClock.now - started).seconds))")
        var passed = 0
        var failed = 0
        func check(_ what: String, _ ok: Bool) {
            if ok { passed += 1 } else { failed += 1 }
            progress("provider: \(what): \(ok ? "ok" : "FAILED")")
        }
        func served(_ label: String) throws {
            let count = try Spawn.capture(
                [
                    "/usr/bin/python3", "-c",
                    """
                    from gi.repository import Gio, GLib
                    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
                    reply = bus.call_sync('org.freedesktop.secrets', '/org/freedesktop/secrets',
                                          'org.freedesktop.Secret.Service', 'SearchItems',
                                          GLib.Variant('(a{ss})', ({'service': 'stress'},)), None,
                                          Gio.DBusCallFlags.NO_AUTO_START, 120000, None).unpack()
                    print(len(reply[0]))
                    """,
                ], environment: ["DBUS_SESSION_BUS_ADDRESS": agent.bus.address])
            check("\(label): a search finds \(items) items", count.output == "\(items)\n")
            let number = Int.random(in: 0..<items)
            let lookup = try Spawn.capture(
                ["secret-tool", "lookup", "service", "stress", "n", "\(number)"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": agent.bus.address])
            check("\(label): secret-tool lookup reads item \(number)", lookup.output == "secret\(number)")
        }
        try served("served")
        let bus = agent.bus
        Spawn.killNow(agent.pid)
        _ = Spawn.waitForExit(agent.pid)
        while bus.hasOwner("org.freedesktop.secrets") { Spawn.pause(microseconds: 20_000) }
        let restarted = ContinuousClock.now
        agent = try ProviderAgent(bus: bus, binDirectory: binDirectory)
        progress("provider: a new agent served them after \(Report.time((ContinuousClock.now - restarted).seconds))")
        try served("after a SIGKILL")
        let idle = agent.idle(seconds: 3)
        progress("provider: idle with \(items) items: RSS \(idle.rss / 1024) KiB, \(idle.ticks) clock ticks in 3 s")
        return (passed, failed)
    }
}
