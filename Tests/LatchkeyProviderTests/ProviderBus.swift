import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A private session bus (a `dbus-daemon` the test starts, ended with its sandbox) on which
/// nobody owns `org.freedesktop.secrets`, and a store directory for the provider's vault. Its
/// services directories are the sandbox's, not the system's (where gnome-keyring's activation
/// file would make `org.freedesktop.secrets` activatable): the user's, `$XDG_DATA_HOME/dbus-1/services`,
/// then ``systemServices``, both empty unless the test writes there.
final class ProviderBus {
    let address: String
    let store: String
    let runtime: String
    /// The user's data directory (`XDG_DATA_HOME`); the bus's first services directory is its `dbus-1/services`.
    let data: String
    /// The user's configuration directory (`XDG_CONFIG_HOME`).
    let config: String
    /// The bus's second services directory, where a test puts another provider's activation file.
    let systemServices: String
    /// The policy file the agent reads (`LATCHKEY_POLICY`), when the test gave one.
    let policy: String?
    /// The bus daemon, kept so its pipes stay open while it runs.
    private let daemon: Child

    /// - Parameters:
    ///   - policy: The JSON of the user's policy, when not the default.
    ///   - otherProvider: Whether ``systemServices`` holds another provider's activation file
    ///     for `org.freedesktop.secrets` (as gnome-keyring installs one), so the bus lists the name as activatable.
    init(policy json: String? = nil, otherProvider: Bool = false) throws {
        let sandbox = try TestSandbox.required(for: "ProviderBus")
        let directory = try sandbox.directoryInSystemTemporary()
        let socket = directory + "/bus"
        address = "unix:path=" + socket
        store = try freshDirectory("store")
        runtime = try sandbox.runtimeDirectory()
        data = try freshDirectory("data")
        config = try freshDirectory("config")
        systemServices = try freshDirectory("system-services")
        if let json {
            let path = try freshDirectory("policy") + "/policy.json"
            try json.write(toFile: path, atomically: true, encoding: .utf8)
            policy = path
        } else {
            policy = nil
        }
        if otherProvider {
            try """
            [D-BUS Service]
            Name=org.freedesktop.secrets
            Exec=/usr/bin/gnome-keyring-daemon --start --foreground --components=secrets

            """.write(toFile: systemServices + "/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        }
        // The system's session configuration with the sandbox's services directories in place of the standard ones.
        let standard = try String(contentsOfFile: "/usr/share/dbus-1/session.conf", encoding: .utf8)
        let directories = "<servicedir>\(data)/dbus-1/services</servicedir><servicedir>\(systemServices)</servicedir>"
        guard let range = standard.range(of: "<standard_session_servicedirs />") else {
            throw TestSupportError("/usr/share/dbus-1/session.conf has no <standard_session_servicedirs />")
        }
        let configuration = try freshDirectory("bus") + "/session.conf"
        try standard.replacingCharacters(in: range, with: directories)
            .replacingOccurrences(of: "<includedir>session.d</includedir>", with: "")
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        // The test's own process (Child): killed when its sandbox ends. A service it activates gets its environment.
        daemon = try Child(
            "/usr/bin/dbus-daemon",
            ["--config-file=" + configuration, "--nofork", "--nopidfile", "--address=" + address],
            environment: [
                "XDG_RUNTIME_DIR": runtime, "LATCHKEY_HOME": store, "LATCHKEY_POLICY": policy,
                "XDG_DATA_HOME": data, "XDG_CONFIG_HOME": config, "LATCHKEY_AGENT": "off",
            ])
        let clock = ContinuousClock()
        let start = clock.now
        while !FileManager.default.fileExists(atPath: socket) {
            guard clock.now - start < .seconds(10) else { throw TestSupportError("the private bus did not start") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// The environment of a client or an agent on this bus.
    var environment: [String: String?] {
        [
            "DBUS_SESSION_BUS_ADDRESS": address, "XDG_RUNTIME_DIR": runtime, "LATCHKEY_HOME": store,
            "LATCHKEY_AGENT": "off", "LATCHKEY_POLICY": policy, "XDG_DATA_HOME": data, "XDG_CONFIG_HOME": config,
        ]
    }

    /// Starts `latchkey agent run --secret-service` in the background (its streams closed; the
    /// sandbox ends it by the agent.lock it holds) and waits until it owns the name.
    /// - Returns: The agent's process id.
    @discardableResult
    func startAgent() throws -> pid_t {
        let shell = try runProgram(
            "sh", ["-c", #""$0" agent run --secret-service </dev/null >/dev/null 2>&1 &"#, try latchkeyPath()],
            environment: environment)
        #expect(shell.status == 0, "\(shell.stderr)")
        let clock = ContinuousClock()
        let start = clock.now
        while clock.now - start < .seconds(30) {
            if let pid = try ownerProcessID() { return pid }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestSupportError("the agent did not take org.freedesktop.secrets: \(agentLog())")
    }

    /// The process id of the owner of `org.freedesktop.secrets` on this bus; nil when nobody owns it.
    func ownerProcessID() throws -> pid_t? {
        let reply = try run(
            "dbus-send",
            [
                "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets",
            ])
        guard reply.status == 0 else { return nil }
        return reply.text.split(separator: " ").last.flatMap {
            pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Runs a client on this bus.
    func run(_ program: String, _ arguments: [String], input: String = "") throws -> Run {
        try runProgram(program, arguments, input: input, environment: environment)
    }

    /// `latchkey audit ACTION` (`show`, `verify`) of the provider's own namespace in ``store``.
    func providerAudit(_ action: String) throws -> Run {
        try run(
            try latchkeyPath(),
            ["--backend", "file", "--store-dir", store, "--app", "io.github.latchkey.secret-service", "audit", action])
    }

    /// Runs `script` with the system's Python and its GObject bindings (python3-gi), a client of
    /// the bus on one connection, as libsecret is.
    func python(_ script: String) throws -> Run {
        let path = try freshDirectory("python") + "/client.py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return try run("/usr/bin/python3", [path])
    }

    /// The agent's log.
    func agentLog() -> String {
        (try? String(contentsOfFile: runtime + "/latchkey/agent.log", encoding: .utf8)) ?? ""
    }
}

/// The start of every Python client: a connection, a `call` that returns the reply unpacked or
/// `error NAME`, and the spec's names.
let pythonPrelude = """
    import gi
    gi.require_version('Gio', '2.0')
    from gi.repository import Gio, GLib
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    S = 'org.freedesktop.Secret.'
    SERVICE = '/org/freedesktop/secrets'
    DEFAULT = '/org/freedesktop/secrets/aliases/default'
    def call(path, interface, method, signature=None, arguments=None):
        try:
            parameters = GLib.Variant(signature, arguments) if signature else None
            return bus.call_sync('org.freedesktop.secrets', path, S + interface if '.' not in interface else interface,
                                 method, parameters, None, Gio.DBusCallFlags.NONE, 5000, None).unpack()
        except GLib.Error as error:
            return 'error ' + str(Gio.DBusError.get_remote_error(error))
    def item_properties(label, attributes):
        return {S + 'Item.Label': GLib.Variant('s', label), S + 'Item.Attributes': GLib.Variant('a{ss}', attributes)}

    """
