import Foundation
import Latchkey
import LatchkeySystem

/// The processes the benchmarks run, through the tools' system layer (LatchkeySystem's
/// `POSIX.Launch`): whole processes for the start-to-exit figures, with stdout and stderr
/// on /dev/null and stdin from a file (or /dev/null), then `waitpid`. Nothing else runs in
/// between, so every program is timed the same way.
enum Spawn {
    /// Makes a fresh private directory under `base` (`mkdtemp`).
    static func makeTemporaryDirectory(in base: String) throws -> String {
        try POSIX.makeTemporaryDirectory(in: base, prefix: "latchkey-bench")
    }

    /// Kills a process at once (SIGKILL).
    static func killNow(_ process: Int32) {
        POSIX.send(.kill, to: process)
    }

    /// Stops a process (SIGSTOP) for `seconds`, then lets it go on (SIGCONT).
    static func stop(_ process: Int32, for seconds: Double) {
        POSIX.send(.stop, to: process)
        POSIX.sleep(.microseconds(Int64(seconds * 1_000_000)))
        POSIX.send(.resume, to: process)
    }

    /// Stops (SIGSTOP) or continues (SIGCONT) a process.
    static func signal(_ process: Int32, stop: Bool) {
        POSIX.send(stop ? .stop : .resume, to: process)
    }

    /// Sleeps for `microseconds`.
    static func pause(microseconds: UInt32) {
        POSIX.sleep(.microseconds(Int64(microseconds)))
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A command ready to spawn: laid out once (``POSIX/Launch``), so timed runs measure
    /// the spawn and the program only. It inherits what a shell's child would.
    final class Prepared {
        private let launch: POSIX.Launch

        init(_ arguments: [String], stdin: String?, environment: [String: String]) {
            let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            launch = POSIX.Launch(
                arguments[0], arguments: arguments, searchingPath: true,
                environment: merged.map { SecretBytes(utf8: "\($0.key)=\($0.value)") },
                standardInput: stdin.map { .reading($0) } ?? .null, inheritingOthers: true)
        }

        /// Spawns it (`posix_spawnp`), waits (`waitpid`) and returns the exit status (128 + signal when killed).
        func run() throws -> Int32 {
            try POSIX.waitForExit(try launch.start()).shellStatus
        }
    }

    /// Runs `arguments` once (``POSIX/Launch``, looked up on `PATH`), with `input` as its
    /// standard input and its standard output and error captured in files of a private
    /// directory (removed after), to check that a command works before timing it.
    /// - Returns: Its exit status (128 + signal when killed), and what it wrote to each stream.
    static func capture(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> (
        status: Int32, output: String, error: String
    ) {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let directory = try POSIX.makeTemporaryDirectory(in: base, prefix: "latchkey-bench-capture")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = (input: directory + "/input", output: directory + "/output", error: directory + "/error")
        try Data((input ?? "").utf8).write(to: URL(fileURLWithPath: paths.input))
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let child = try POSIX.Launch(
            arguments[0], arguments: arguments, searchingPath: true,
            environment: merged.map { SecretBytes(utf8: "\($0.key)=\($0.value)") },
            standardInput: .reading(paths.input),
            standardOutput: .writing(paths.output), standardError: .writing(paths.error)
        ).start()
        let status = try POSIX.waitForExit(child).shellStatus
        let output = FileManager.default.contents(atPath: paths.output) ?? Data()
        let error = FileManager.default.contents(atPath: paths.error) ?? Data()
        return (status, String(decoding: output, as: UTF8.self), String(decoding: error, as: UTF8.self))
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
        /// The exit status each run must have (1 for a lookup that finds no service).
        var expectedStatus: Int32 = 0
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
                guard status == commands[index].expectedStatus else {
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
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        return try POSIX.Launch(
            arguments[0], arguments: arguments, searchingPath: true,
            environment: merged.map { SecretBytes(utf8: "\($0.key)=\($0.value)") },
            standardOutput: .writing(output), standardError: .writing(errors), detachment: .ownGroup,
            inheritingOthers: true
        ).start()
    }

    /// Waits for `pid` (`waitpid`). - Returns: its exit status, 128 + signal when killed (255 when it is no child).
    static func waitForExit(_ pid: Int32) -> Int32 {
        (try? POSIX.waitForExit(pid))?.shellStatus ?? 255
    }

    /// Kills `pid` and everything it started, as a crash or a service manager would:
    /// stops it (`SIGSTOP`, so it starts nothing more), kills the process group of each
    /// child (a refresh command runs in a group of its own), then its own group.
    static func killWithChildren(_ pid: Int32) {
        POSIX.send(.stop, to: pid)
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            for child in children.split(separator: " ").compactMap({ Int32($0) }) {
                POSIX.send(.kill, to: -child)
                POSIX.send(.kill, to: child)
            }
        }
        POSIX.send(.kill, to: -pid)
    }
}
