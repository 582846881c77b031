import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Every C call of the benchmarks. Runs whole processes for the start-to-exit
/// figures: `posix_spawnp` with stdout and stderr on /dev/null and stdin from a
/// file (or /dev/null), then `waitpid`. Nothing else runs in between, so every
/// program is timed the same way.
enum Spawn {
    /// Makes a fresh private directory under `base` (`mkdtemp`).
    static func makeTemporaryDirectory(in base: String) throws -> String {
        // mkdtemp replaces the six Xs
        var template = Array("\(base)/latchkey-bench.\(String(repeating: "X", count: 6))".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure(description: "mkdtemp in \(base) failed") }
        return String(cString: made)
    }

    /// Kills a process at once (`kill` with SIGKILL).
    static func killNow(_ process: Int32) {
        kill(process, SIGKILL)
    }

    /// Stops a process (`kill` with SIGSTOP) for `seconds`, then lets it go on (SIGCONT).
    static func stop(_ process: Int32, for seconds: Double) {
        kill(process, SIGSTOP)
        usleep(UInt32(seconds * 1_000_000))
        kill(process, SIGCONT)
    }

    /// Stops (SIGSTOP) or continues (SIGCONT) a process.
    static func signal(_ process: Int32, stop: Bool) {
        kill(process, stop ? SIGSTOP : SIGCONT)
    }

    /// A client connection to the Unix socket at `path` (`socket`, `connect`), as an idle
    /// client holds one, or nil; close it with ``close(_:)``.
    static func connectUnixSocket(_ path: String) -> Int32? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(descriptor)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Closes a descriptor (`close`).
    static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// Sleeps for up to `microseconds` (`usleep`).
    static func pause(microseconds: UInt32) {
        usleep(microseconds)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A command ready to spawn: its file actions and C strings are built once
    /// and freed by the owner, so timed runs measure the spawn and the program only.
    final class Prepared {
        private let arguments: [String]
        private var actions = posix_spawn_file_actions_t()
        private let argv: [UnsafeMutablePointer<CChar>?]
        private let envp: [UnsafeMutablePointer<CChar>?]

        init(_ arguments: [String], stdin: String?, environment: [String: String]) {
            self.arguments = arguments
            posix_spawn_file_actions_init(&actions)
            posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            argv = arguments.map { strdup($0) } + [nil]
            envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }

        deinit {
            posix_spawn_file_actions_destroy(&actions)
            for pointer in argv + envp { free(pointer) }
        }

        /// Spawns it (`posix_spawnp`), waits (`waitpid`) and returns the exit status (128 + signal when killed).
        func run() throws -> Int32 {
            var pid: pid_t = 0
            let result = posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp)
            guard result == 0 else {
                throw Failure(description: "posix_spawnp \(arguments[0]): \(String(cString: strerror(result)))")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { throw Failure(description: "waitpid: \(String(cString: strerror(errno)))") }
            }
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : 128 + signal
        }
    }

    /// Runs `arguments` once through Foundation's `Process`, capturing its
    /// output, to check that a command works before timing it.
    static func capture(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> (
        status: Int32, output: String, error: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        let error = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = standardInput
        try process.run()
        standardInput.fileHandleForWriting.write(Data((input ?? "").utf8))
        try standardInput.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// Whether `name` is an executable on PATH (or a path to one).
    static func which(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// A command to time: its command line, the file its stdin reads (/dev/null
    /// when nil), and what it adds to this process's environment.
    struct Command {
        var arguments: [String]
        var stdin: String?
        var environment: [String: String] = [:]
    }

    /// `count` timed runs of each of several commands that must exit 0, taken
    /// in turn (one run of each, then the next round), after 3 untimed rounds:
    /// a change in the machine's load during the runs then moves every
    /// figure alike instead of only the ones measured while it lasted. Each
    /// round starts one command further on, so no command always runs right after
    /// the same one: a command that leaves work behind it would otherwise slow the
    /// same neighbour in every run. (With a fixed order, `session get --refresh-command`
    /// on the Secret Service, always run after the file backend's `session get`,
    /// measured 1.1-1.2x the plain `session get` run after `latchkey --version`, with
    /// the same instructions, D-Bus calls and CPU time in client and daemon;
    /// BENCHMARKS.md, "Rotation".)
    /// - Returns: One summary per command, in order.
    static func timeInTurn(_ count: Int, _ commands: [Command]) throws -> [Summary] {
        let prepared = commands.map { Prepared($0.arguments, stdin: $0.stdin, environment: $0.environment) }
        var samples = [[Double]](repeating: [], count: commands.count)
        for round in 0..<(count + 3) {
            for step in prepared.indices {
                let index = (round + step) % prepared.count
                let command = prepared[index]
                let (status, elapsed) = try Stopwatch.timed { try command.run() }
                guard status == 0 else {
                    throw Failure(
                        description: "\(commands[index].arguments.joined(separator: " ")) exited with \(status)")
                }
                if round >= 3 { samples[index].append(elapsed) }
            }
        }
        return samples.map(Summary.init)
    }
}

extension Spawn {
    /// Starts `arguments` in a process group of its own (`posix_spawnp` with
    /// `POSIX_SPAWN_SETPGROUP`): stdin from /dev/null, stdout to the file `output`,
    /// stderr to the file `errors` (both created).
    /// - Returns: The process id, which is also its group's id.
    static func startInGroup(_ arguments: [String], environment: [String: String], output: String, errors: String)
        throws -> Int32
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw Failure(description: "posix_spawnp \(arguments[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Waits for `pid` (`waitpid`). - Returns: its exit status, 128 + signal when killed.
    static func waitForExit(_ pid: Int32) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Kills `pid` and everything it started, as a crash or a service manager would:
    /// stops it (`SIGSTOP`, so it starts nothing more), kills the process group of each
    /// child (a refresh command runs in a group of its own), then its own group.
    static func killWithChildren(_ pid: Int32) {
        kill(pid, SIGSTOP)
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            for child in children.split(separator: " ").compactMap({ Int32($0) }) {
                kill(-child, SIGKILL)
                kill(child, SIGKILL)
            }
        }
        kill(-pid, SIGKILL)
    }
}
