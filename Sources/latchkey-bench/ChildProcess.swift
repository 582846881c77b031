import Foundation

/// A `latchkey-testhelper` child whose acknowledgements (one number per line on
/// stdout) the parent reads as they come.
final class ChildProcess {
    let process = Process()
    private let output = Pipe()
    private var pending = Data()

    /// Starts `executable` with `arguments`.
    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
    }

    /// The next whole line, waiting for it; nil once the child's stdout is closed.
    func line() -> String? {
        while true {
            if let end = pending.firstIndex(of: 10) {
                let text = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...end)
                return text
            }
            let more = output.fileHandleForReading.availableData
            guard !more.isEmpty else { return nil }
            pending.append(more)
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
