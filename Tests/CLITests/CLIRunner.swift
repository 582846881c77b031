import Foundation
import Testing

/// The built `latchkey` binary, next to the test bundle (`swift build --build-tests` builds it; `make test` does).
func latchkeyPath() throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS" { directory.deleteLastPathComponent() }
    let path = directory.appendingPathComponent("latchkey").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw CLITestError("\(path) is missing; build it with `swift build --build-tests` (make test does)")
    }
    return path
}

struct CLITestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a finished process left behind.
struct Run {
    let status: Int32
    let stdout: Data
    let stderr: String

    var text: String { String(decoding: stdout, as: UTF8.self) }
    var lines: [String] { text.split(separator: "\n").map(String.init) }

    /// Standard output as the one JSON document `--json` promises, checked for `"version": 1`.
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: stdout) as? [String: Any] else {
            throw CLITestError("standard output is not a JSON object: \(text)")
        }
        guard object["version"] as? Int == 1 else { throw CLITestError("no \"version\": 1 in \(text)") }
        return object
    }

    /// The error code of a `--json` error document.
    func errorCode() throws -> String? {
        (try json()["error"] as? [String: Any])?["code"] as? String
    }
}

/// Starts a process with pipes for its three standard streams.
final class Child {
    let process = Process()
    let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()

    init(_ executable: String, _ arguments: [String], environment: [String: String?] = [:], directory: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Writes `data` to standard input, closes it, and waits for the end.
    func finish(writing data: Data = Data()) throws -> Run {
        if !data.isEmpty { try input.fileHandleForWriting.write(contentsOf: data) }
        try input.fileHandleForWriting.close()
        let collected = DataCollector(errors.fileHandleForReading)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: out, stderr: String(decoding: collected.wait(), as: UTF8.self))
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

/// Runs `latchkey` (or `executable`) to the end.
@discardableResult
func latchkey(_ arguments: [String], input: String = "", environment: [String: String?] = [:], executable: String? = nil) throws -> Run {
    try Child(executable ?? latchkeyPath(), arguments, environment: environment).finish(writing: Data(input.utf8))
}

/// A fresh private directory for one test, in the sandbox of `.ci/with-keyring` when there is one.
func freshDirectory(_ label: String = #function) throws -> String {
    let base = ProcessInfo.processInfo.environment["LATCHKEY_TEST_SANDBOX"] ?? NSTemporaryDirectory()
    let name = "cli-" + label.filter { $0.isLetter || $0.isNumber }.prefix(40) + "-" + UUID().uuidString.prefix(8)
    let path = (base as NSString).appendingPathComponent(String(name))
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}

/// A fresh app namespace and store directory on one backend: every test gets its own.
struct Store: CustomTestStringConvertible, Sendable {
    let backend: String
    let directory: String
    let app: String
    var storeDirectory: String

    init(_ backend: String, _ label: String = #function) throws {
        self.backend = backend
        directory = try freshDirectory(label)
        storeDirectory = directory + "/store"
        app = "cli-test-" + UUID().uuidString.prefix(12).lowercased()
    }

    var vaultPath: String { storeDirectory + "/\(app).vault" }
    var testDescription: String { backend }

    /// The global options that select this store.
    var options: [String] { ["--backend", backend, "--store-dir", storeDirectory, "--app", app] }

    /// Runs `latchkey` with this store's options before `arguments`.
    @discardableResult
    func run(_ arguments: [String], input: String = "", environment: [String: String?] = [:]) throws -> Run {
        try latchkey(options + arguments, input: input, environment: environment)
    }

    /// Runs with `--json` and returns the document, expecting `status`.
    func json(_ arguments: [String], input: String = "", status: Int32 = 0) throws -> [String: Any] {
        let run = try self.run(["--json"] + arguments, input: input)
        #expect(run.status == status, "\(arguments): \(run.stderr)")
        return try run.json()
    }
}

/// Both backends: the encrypted file, and the Secret Service of `make test`'s private keyring.
let backends = ["file", "secret-service"]
