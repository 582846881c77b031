import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The test session's gnome-keyring-daemon, reached through `dbus-send`: its pid (to stop or
/// kill it), locking its login collection, and bringing it back unlocked.
public enum KeyringDaemon {
    public static func send(_ arguments: [String]) throws -> String {
        let output = try runProgram(
            "dbus-send", ["--session", "--print-reply", "--reply-timeout=5000"] + arguments)
        guard output.status == 0 else {
            throw TestSupportError("dbus-send \(arguments.joined(separator: " ")) failed: \(output.stderr)")
        }
        return output.text
    }

    public static func pid() throws -> pid_t {
        let reply = try send([
            "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets",
        ])
        guard
            let number = reply.split(separator: " ").last.flatMap({
                pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
            })
        else {
            throw TestSupportError("no process id in: \(reply)")
        }
        return number
    }

    public static func lockLogin() throws {
        _ = try send([
            "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/collection/login",
        ])
    }

    public static func isLoginLocked() throws -> Bool {
        let reply = try send([
            "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login",
            "org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.Secret.Collection", "string:Locked",
        ])
        return reply.contains("boolean true")
    }

    public static func isRunning() throws -> Bool {
        try send([
            "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
            "string:org.freedesktop.secrets",
        ]).contains("boolean true")
    }

    /// Starts a daemon that replaces the current one, unlocked with the test
    /// keyring's password, and waits until its login collection is unlocked.
    public static func restartUnlocked() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let passwordFile = environment["LATCHKEY_TEST_KEYRING_PASSWORD_FILE"],
            let sandbox = environment["LATCHKEY_TEST_SANDBOX"]
        else {
            throw TestSupportError("not inside .ci/with-keyring: LATCHKEY_TEST_KEYRING_PASSWORD_FILE is not set")
        }
        let pid = try spawn(
            ["gnome-keyring-daemon", "--replace", "--foreground", "--unlock", "--components=secrets"],
            input: passwordFile, log: sandbox + "/gnome-keyring-restarted.log")
        let clock = ContinuousClock()
        let start = clock.now
        while clock.now - start < .seconds(10) {
            // While the old daemon hands over, any of these may fail for a moment.
            if (try? KeyringDaemon.pid()) == pid, (try? isLoginLocked()) == false { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestSupportError("the restarted gnome-keyring-daemon did not come up unlocked")
    }

    /// The D-Bus path the `default` alias names (`ReadAlias`); `/` when there is no default collection.
    public static func defaultAlias() throws -> String {
        let reply = try send([
            "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias",
            "string:default",
        ])
        guard let path = reply.split(separator: "\"").dropFirst().first else {
            throw TestSupportError("no object path in: \(reply)")
        }
        return String(path)
    }

    /// Replaces the daemon with one whose data directory (`XDG_DATA_HOME`) is `dataHome`, which
    /// holds no keyring: it has only its in-memory `session` collection and no default
    /// collection (what KWallet with no wallet offers, too). ``restartUnlocked()`` brings the
    /// test keyring back.
    public static func restartWithoutKeyrings(dataHome: String) throws {
        guard let sandbox = ProcessInfo.processInfo.environment["LATCHKEY_TEST_SANDBOX"] else {
            throw TestSupportError("not inside .ci/with-keyring: LATCHKEY_TEST_SANDBOX is not set")
        }
        try FileManager.default.createDirectory(atPath: dataHome, withIntermediateDirectories: true)
        let pid = try spawn(
            ["gnome-keyring-daemon", "--replace", "--foreground", "--components=secrets"], input: "/dev/null",
            log: sandbox + "/gnome-keyring-without-keyrings.log", environment: ["XDG_DATA_HOME": dataHome])
        let clock = ContinuousClock()
        let start = clock.now
        while clock.now - start < .seconds(10) {
            if (try? KeyringDaemon.pid()) == pid, (try? defaultAlias()) == "/" { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestSupportError("the gnome-keyring-daemon without keyrings did not come up")
    }

    /// Starts a program with `posix_spawnp`, stdin from a file, no signal
    /// blocked or ignored. (Foundation's Process passes on the test runner's
    /// blocked signals, and a daemon that never sees SIGTERM cannot be replaced.)
    /// `environment` replaces those variables of the process's own environment.
    static func spawn(_ arguments: [String], input: String, log: String, environment: [String: String] = [:]) throws
        -> pid_t
    {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        let argv = arguments.map { strdup($0) } + [nil]
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        for pointer in argv + envp { free(pointer) }
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attributes)
        guard result == 0 else { throw TestSupportError("posix_spawnp \(arguments[0]) failed: \(result)") }
        return pid
    }

    /// Leaves a running daemon with an unlocked login collection, restarting it when needed.
    public static func ensureUnlocked() throws {
        if try isRunning(), try !isLoginLocked() { return }
        try restartUnlocked()
    }
}
