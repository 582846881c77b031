import Foundation
import LatchkeyTestSupport

@testable import LatchkeyCLI

/// Helpers for the tests of what the binary generates (help, manual page, completions).
enum GeneratedFiles {
    /// The repository's top directory (this file is `Tests/LatchkeyCLITests/` in it).
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// Runs `latchkey arguments`, expects success, and writes its output to `name` in a fresh directory.
    /// - Returns: The file's path.
    static func write(_ arguments: [String], as name: String, label: String = #function) throws -> String {
        let run = try LatchkeyTestSupport.latchkey(arguments)
        guard run.status == 0 else { throw TestSupportError("latchkey \(arguments) failed: \(run.stderr)") }
        let path = try freshDirectory(label) + "/" + name
        try run.stdout.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs a program (found on PATH when `executable` has no slash) to the end.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:], input: String = ""
    ) throws -> Run {
        let path = executable.contains("/") ? executable : try which(executable)
        return try Child(path, arguments, environment: environment).finish(writing: Data(input.utf8))
    }

    /// The full path of `program` on PATH.
    /// - Throws: `TestSupportError` naming the Debian package's absence when it is not installed.
    static func which(_ program: String) throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories + ["/usr/bin", "/bin"]
        where FileManager.default.isExecutableFile(atPath: "\(directory)/\(program)") {
            return "\(directory)/\(program)"
        }
        throw TestSupportError("\(program) is not installed; `make test` installs it (.ci/install-deps)")
    }

    /// `text` with every run of white space made one space, so wrapped lines compare as one.
    static func flattened(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Every option of the description: the global ones, then each command's.
    static var allOptions: [Option] { Tool.globalOptions + Command.all.flatMap(\.options) }
}
