import Foundation
import Synchronization

/// What a finished process left behind.
public struct Run: Sendable {
    /// Its exit status.
    public let status: Int32
    /// Its standard output.
    public let stdout: Data
    /// Its standard error, as text.
    public let stderr: String

    /// Standard output as text.
    public var text: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard output's lines.
    public var lines: [String] { text.split(separator: "\n").map(String.init) }

    /// Standard output as the one JSON document `--json` promises, checked for `"version": 1`.
    public func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: stdout) as? [String: Any] else {
            throw TestSupportError("standard output is not a JSON object: \(text)")
        }
        guard object["version"] as? Int == 1 else { throw TestSupportError("no \"version\": 1 in \(text)") }
        return object
    }

    /// The error code of a `--json` error document.
    public func errorCode() throws -> String? {
        (try json()["error"] as? [String: Any])?["code"] as? String
    }
}

/// A started process with pipes for its three standard streams.
public final class Child {
    /// Writing to a child that has exited gives `EPIPE` instead of killing the test process.
    private static let ignoresBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// The process.
    public let process = Process()
    /// Its standard input.
    public let input: Pipe
    private let output: Pipe
    private let errors: Pipe

    /// Held while pipes are made and a child started: each pipe is close-on-exec before
    /// another test's child can start, so no child keeps another's pipe open (a long-lived
    /// one, a server, would otherwise hold every command started beside it waiting for the end of its output).
    private static let spawning = Mutex(())

    /// Its standard output, to read from while it runs (``finish(writing:)`` reads the rest).
    public var outputHandle: FileHandle { output.fileHandleForReading }

    /// Starts `executable`. In a test with a ``TestSandbox``, the process is the test's (ended
    /// with it if it still runs) and its `XDG_RUNTIME_DIR` is the test's own unless `environment`
    /// sets it, so an agent a command starts on demand is the test's too. Outside
    /// `.ci/with-keyring` (``SecretServiceGate``) it sees no session bus unless `environment`
    /// gives one, so no command a test runs reaches a developer's own keyring.
    /// - Parameters:
    ///   - executable: The program's path.
    ///   - arguments: Its arguments.
    ///   - environment: Changes to this process's environment: a nil value removes the variable.
    ///   - directory: Its working directory; this process's when nil.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:], directory: String? = nil
    ) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        let sandbox = TestSandbox.current
        if let sandbox {
            env["XDG_RUNTIME_DIR"] = try sandbox.runtimeDirectory()
            if !SecretServiceGate.isAvailable { env["DBUS_SESSION_BUS_ADDRESS"] = nil }
        }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let process = self.process
        (input, output, errors) = try Self.spawning.withLock { _ in
            let pipes = (Pipe(), Pipe(), Pipe())
            for pipe in [pipes.0, pipes.1, pipes.2] {
                for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                    _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
                }
            }
            process.standardInput = pipes.0
            process.standardOutput = pipes.1
            process.standardError = pipes.2
            try process.run()
            return pipes
        }
        sandbox?.adopt(process.processIdentifier)
    }

    /// Writes `data` to standard input, closes it, and waits for the end.
    /// - Parameter data: The input.
    /// - Returns: The status and output.
    public func finish(writing data: Data = Data()) throws -> Run {
        _ = Child.ignoresBrokenPipes
        do {
            if !data.isEmpty { try input.fileHandleForWriting.write(contentsOf: data) }
        } catch let error as NSError where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(EPIPE) {
            // The child exited (a usage error, say) without reading all of its input.
        }
        try? input.fileHandleForWriting.close()
        let collected = DataCollector(errors.fileHandleForReading)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, stdout: out, stderr: String(decoding: collected.wait(), as: UTF8.self))
    }
}

/// Reads a pipe to its end on another thread, so neither pipe can fill up and stall the child.
private final class DataCollector: @unchecked Sendable {
    // Sendable: `data` is written by the reading thread before the semaphore is signalled and read only after waiting on it.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}

/// Runs a program to the end.
/// - Parameters:
///   - executable: Its path, or a name found on `PATH`.
///   - arguments: Its arguments.
///   - input: What to write to its standard input.
///   - environment: Changes to this process's environment: a nil value removes the variable.
/// - Returns: The status and output.
@discardableResult
public func runProgram(
    _ executable: String, _ arguments: [String], input: String = "", environment: [String: String?] = [:]
) throws -> Run {
    let (path, leading) = executable.contains("/") ? (executable, []) : ("/usr/bin/env", [executable])
    return try Child(path, leading + arguments, environment: environment).finish(writing: Data(input.utf8))
}

/// Runs `latchkey` (or `executable`, such as a `git-credential-latchkey` link to it) to the end.
@discardableResult
public func latchkey(
    _ arguments: [String], input: String = "", environment: [String: String?] = [:], executable: String? = nil
) throws -> Run {
    try runProgram(executable ?? latchkeyPath(), arguments, input: input, environment: environment)
}
