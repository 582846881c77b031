import Foundation
import Synchronization
import Testing

/// What one test owns on the machine: a private directory (every ``freshDirectory(_:)``
/// of the test and its agents' runtime directory are inside it) and the processes it
/// started. The ``Testing/Trait/sandboxed`` trait gives each test case one and ends it
/// when the test case ends, however it ends (passed, failed, thrown, cancelled):
/// every process the test started that still runs gets SIGKILL, every process holding
/// a lock on a file in its directories (an agent a command started on demand) SIGTERM,
/// then SIGKILL after a second; then the directories are removed.
public final class TestSandbox: Sendable {
    /// The sandbox of the test case running in this task, if its suite is ``Testing/Trait/sandboxed``.
    @TaskLocal public static var current: TestSandbox?

    /// What the sandbox has made and started.
    private struct Owned {
        /// The test's own directory, once made.
        var root: String?
        /// The agents' runtime directory, once made.
        var runtime: String?
        /// Directories made outside `root`.
        var extra: [String] = []
        /// The processes started, each with its start time (so a process id reused later is not taken for it).
        var children: [(pid: pid_t, started: String)] = []
    }

    private let name: String
    private let owned = Mutex(Owned())

    init(name: String) {
        self.name = String(name.filter { $0.isLetter || $0.isNumber }.prefix(24))
    }

    /// The running test case's sandbox.
    /// - Parameter use: What needs it, for the error.
    /// - Throws: ``TestSupportError`` outside a test whose suite has the ``Testing/Trait/sandboxed`` trait.
    public static func required(for use: String) throws -> TestSandbox {
        guard let current else {
            throw TestSupportError(
                "\(use) needs the test's sandbox: add the .sandboxed trait to the suite (@Suite(\"…\", .sandboxed))")
        }
        return current
    }

    /// Where the sandboxes go: the directory `.ci/with-keyring` makes and removes
    /// afterwards (`LATCHKEY_TEST_SANDBOX`), or the system's temporary directory.
    static var base: String {
        ProcessInfo.processInfo.environment["LATCHKEY_TEST_SANDBOX"] ?? NSTemporaryDirectory()
    }

    /// The test's own directory, created (0700) on first use.
    private func rootDirectory() throws -> String {
        try owned.withLock { owned in
            if let root = owned.root { return root }
            let path = (Self.base as NSString).appendingPathComponent(name + "-" + UUID().uuidString.prefix(8))
            try makePrivateDirectory(path)
            owned.root = path
            return path
        }
    }

    /// A new private (0700) directory inside the test's own.
    /// - Parameter label: Part of its name, for finding it when a test fails.
    /// - Returns: Its path.
    public func directory(_ label: String) throws -> String {
        let name = label.filter { $0.isLetter || $0.isNumber }.prefix(40) + "-" + UUID().uuidString.prefix(8)
        let path = (try rootDirectory() as NSString).appendingPathComponent(String(name))
        try makePrivateDirectory(path)
        return path
    }

    /// The test's `XDG_RUNTIME_DIR` (0700), where a command it runs starts its agent: inside
    /// the test's directory, or one of ``directoryInSystemTemporary()`` when the agent's
    /// socket path (`latchkey/agent.sock` inside it) would not fit in a socket address there.
    public func runtimeDirectory() throws -> String {
        let inside = (try rootDirectory() as NSString).appendingPathComponent("run")
        if let runtime = owned.withLock({ $0.runtime }) { return runtime }
        let path: String
        if (inside + "/latchkey/agent.sock").utf8.count < 100 {
            try makePrivateDirectory(inside)
            path = inside
        } else {
            path = try directoryInSystemTemporary()
        }
        return owned.withLock { owned in
            if owned.runtime == nil { owned.runtime = path }
            return owned.runtime ?? path
        }
    }

    /// A new private (0700) directory right in `/tmp`, removed with the sandbox, for a
    /// test that opens a way in for another user (whom the sandbox's own directory, in
    /// private parents, keeps out) or needs a short path.
    public func directoryInSystemTemporary() throws -> String {
        var template = Array("/tmp/lk-test-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else {
            throw TestSupportError("mkdtemp /tmp/lk-test-XXXXXX failed: errno \(errno)")
        }
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        owned.withLock { $0.extra.append(path) }
        return path
    }

    /// Makes the process `pid`, just started, the test's: it is ended with the test if it still runs.
    func adopt(_ pid: pid_t) {
        guard let started = ProcessTable.startTime(pid) else { return }
        owned.withLock { $0.children.append((pid, started)) }
    }

    /// Ends what the test left: its children and every process holding a lock in its
    /// directories, then removes them.
    /// - Returns: What could not be ended or removed.
    func end() -> [String] {
        let (children, directories) = owned.withLock { owned in
            (owned.children, (owned.root.map { [$0] } ?? []) + owned.extra)
        }
        // A child gets SIGKILL at once: it inherits the test runner's blocked signals, SIGTERM among them.
        var problems = ProcessTable.kill(
            Set(children.filter { ProcessTable.startTime($0.pid) == $0.started }.map(\.pid)))
        problems += ProcessTable.end(lockHolders(below: directories))
        for directory in directories {
            do { try removeTree(directory) } catch { problems.append("could not remove \(directory): \(error)") }
        }
        return problems
    }
}

/// The trait that gives every test of a suite (each case of a parameterized test) a
/// ``TestSandbox`` of its own, ended when the test case ends.
public struct SandboxTrait: SuiteTrait, TestTrait, TestScoping {
    /// Every test and nested suite of the suite gets it.
    public var isRecursive: Bool { true }

    /// A scope for each test case; none for the suite or the function as a whole.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    /// Runs `function` with a fresh ``TestSandbox``, then ends it, recording what it could not end.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let sandbox = TestSandbox(name: test.name)
        let outcome: (any Error)?
        do {
            try await TestSandbox.$current.withValue(sandbox) { try await function() }
            outcome = nil
        } catch {
            outcome = error
        }
        for problem in sandbox.end() { Issue.record(Comment(rawValue: "test sandbox: \(problem)")) }
        if let outcome { throw outcome }
    }
}

extension Trait where Self == SandboxTrait {
    /// Each test case gets a ``TestSandbox``: its ``freshDirectory(_:)``s, its agents'
    /// runtime directory and the processes it starts are ended and removed with it.
    public static var sandboxed: Self { Self() }
}

/// A fresh private (0700) directory for one test, inside its ``TestSandbox`` (removed
/// when the test ends), so inside the sandbox `.ci/with-keyring` makes
/// (`LATCHKEY_TEST_SANDBOX`) or the system's temporary directory.
/// - Parameter label: Part of the name, for finding it when a test fails; the test's name by default.
/// - Returns: The directory's path.
/// - Throws: ``TestSupportError`` when the suite is not ``Testing/Trait/sandboxed``.
public func freshDirectory(_ label: String = #function) throws -> String {
    try TestSandbox.required(for: "freshDirectory").directory(label)
}

/// Creates `path` with mode 0700 (its parents as needed).
private func makePrivateDirectory(_ path: String) throws {
    try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
}

/// Removes `path` and everything below it, first giving back the owner's access to
/// every directory a test took it away from (a test of unreadable directories, say).
private func removeTree(_ path: String) throws {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
        chmod(path, 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            try removeTree(path + "/" + name)
        }
    }
    try FileManager.default.removeItem(atPath: path)
}

/// The processes other than this one holding a lock (`flock`, `fcntl`) on a file below
/// `directories`, read from `/proc/locks` (which any user can read, unlike another
/// process's descriptors when it is not dumpable, as an agent is not).
private func lockHolders(below directories: [String]) -> Set<pid_t> {
    var files: Set<String> = []
    func collect(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        files.insert(String(format: "%02llx:%02llx:%llu", major, minor, UInt64(info.st_ino)))
        guard info.st_mode & S_IFMT == S_IFDIR,
            let names = try? FileManager.default.contentsOfDirectory(atPath: path)
        else { return }
        for name in names { collect(path + "/" + name) }
    }
    for directory in directories { collect(directory) }
    guard !files.isEmpty, let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
    var holders: Set<pid_t> = []
    for line in table.split(separator: "\n") {
        // "1: FLOCK  ADVISORY  WRITE 1234 00:2b:5678 0 EOF", or "1: -> FLOCK ..." for a waiter.
        let fields = line.split(separator: " ").filter { $0 != "->" }
        guard fields.count >= 6, let pid = pid_t(fields[4]), pid > 0, pid != getpid(),
            files.contains(String(fields[5]))
        else { continue }
        holders.insert(pid)
    }
    return holders
}

/// Ending processes that are not necessarily this one's children.
enum ProcessTable {
    /// The fields of `/proc/<pid>/stat` after the command's name, from the state on; nil when there is no such process.
    private static func status(_ pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ")
    }

    /// Whether `pid` still runs (a zombie does not).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let fields = status(pid) else { return false }
        return fields.first != "Z"
    }

    /// When `pid` started (clock ticks since boot, field 22 of its stat), which tells it from a later process with its id.
    static func startTime(_ pid: pid_t) -> String? {
        guard let fields = status(pid), fields.count > 19 else { return nil }
        return String(fields[19])
    }

    /// Its command line, for a message.
    static func commandLine(_ pid: pid_t) -> String {
        let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }

    /// Sends SIGTERM to every one of `processes`, waits up to a second for them to end,
    /// then sends SIGKILL to those still there and waits up to two more.
    /// - Returns: A description of each that did not end.
    static func end(_ processes: Set<pid_t>) -> [String] {
        signal(processes, [(SIGTERM, 1.0), (SIGKILL, 2.0)])
    }

    /// Sends SIGKILL to every one of `processes` and waits up to two seconds for them to end.
    /// - Returns: A description of each that did not end.
    static func kill(_ processes: Set<pid_t>) -> [String] {
        signal(processes, [(SIGKILL, 2.0)])
    }

    /// Sends each signal in turn to those of `processes` still running, waiting up to its grace for them to end.
    private static func signal(_ processes: Set<pid_t>, _ signals: [(Int32, Double)]) -> [String] {
        var left = processes.filter(isRunning)
        for (signal, grace) in signals where !left.isEmpty {
            for pid in left { Glibc.kill(pid, signal) }
            let deadline = Date(timeIntervalSinceNow: grace)
            while !left.isEmpty && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
                left = left.filter(isRunning)
            }
        }
        return left.map { "process \($0) (\(commandLine($0))) did not end on SIGKILL" }
    }
}

/// An error of the test support itself, such as a missing binary.
public struct TestSupportError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// Creates an error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// An executable product of this package, built next to the test bundle by
/// `swift build --build-tests` (which `make test` runs).
/// - Parameter name: The product, such as `latchkey` or `latchkey-testhelper`.
/// - Returns: Its path.
/// - Throws: ``TestSupportError`` when it has not been built.
public func builtProductPath(_ name: String) throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    // `swift test` runs `<bin>/LatchkeyPackageTests.xctest`; step out of a bundle directory if there is one.
    while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS" {
        directory.deleteLastPathComponent()
    }
    let path = directory.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw TestSupportError("\(path) is missing; build it with `swift build --build-tests` (make test does)")
    }
    return path
}

/// The built `latchkey` binary.
public func latchkeyPath() throws -> String { try builtProductPath("latchkey") }

/// The built `latchkey-testhelper` binary, which the file and audit tests run as a second process.
public func testHelperPath() throws -> String { try builtProductPath("latchkey-testhelper") }
