import Foundation
import Latchkey
import LatchkeySystem

/// A `latchkey-testhelper` child whose acknowledgements (one number per line on
/// stdout) the parent reads as they come, started through the tools' system layer
/// (`POSIX.Launch`, its standard output a `POSIX.Pipe`).
final class ChildProcess {
    /// Its process id.
    let processID: Int32
    private let output: POSIX.Pipe
    private var pending: [UInt8] = []
    private var termination: POSIX.Termination?

    /// Starts `executable` with `arguments`, with this process's standard input and error.
    init(_ executable: String, _ arguments: [String]) throws {
        output = try POSIX.Pipe()
        processID = try POSIX.Launch(
            executable, arguments: [executable] + arguments, standardInput: .inherited,
            standardOutput: .descriptor(output.writingEnd), standardError: .inherited
        ).start()
        output.closeWritingEnd()
    }

    /// The next whole line, waiting for it; nil once the child's stdout is closed.
    func line() -> String? {
        while true {
            if let end = pending.firstIndex(of: 10) {
                let text = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeSubrange(...end)
                return text
            }
            guard let more = try? output.read(), !more.isEmpty else { return nil }
            pending.append(contentsOf: more)
        }
    }

    /// The acknowledged numbers still to be read, until the child's stdout closes.
    func remainingNumbers() -> [Int] {
        var numbers: [Int] = []
        while let text = line() {
            if let number = Int(text) { numbers.append(number) }
        }
        return numbers
    }

    /// How it ended, waiting for it (`waitpid`, once).
    /// - Throws: `.io` when it cannot be waited for.
    func waitForExit() throws -> POSIX.Termination {
        if let termination { return termination }
        let ended = try POSIX.waitForExit(processID)
        termination = ended
        return ended
    }

    /// The helper executables built next to this one.
    static func sibling(_ name: String) throws -> String {
        // argv[0] is the fallback without /proc
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let path = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Spawn.Failure(
                description: "\(path) is missing; make stress builds it (swift build -c release --product \(name))")
        }
        return path
    }
}
