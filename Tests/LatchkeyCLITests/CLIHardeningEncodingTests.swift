import Foundation
import LatchkeyTestSupport
import Testing

/// Names, accounts, app ids and paths whose bytes are not UTF-8 (issue 25): refused
/// as usage errors naming the argument, never read with U+FFFD in their place,
/// which made two different names one session and one path another.
@Suite("latchkey refuses arguments and variables that are not UTF-8", .sandboxed)
struct CLIHardeningEncodingTests {
    /// `bytes` as a shell word: `"$(printf '\ooo...')"`, so that any byte reaches the program.
    static func shellWord(_ bytes: [UInt8]) -> String {
        "\"$(printf '" + bytes.map { "\\" + String($0, radix: 8) }.joined() + "')\""
    }

    /// Runs `latchkey` with `arguments` and `environment` given as raw bytes, through `sh`.
    static func run(_ arguments: [[UInt8]], environment: [String: [UInt8]] = [:], input: String = "") throws -> Run {
        let exports = environment.map { "export \($0.key)=\(shellWord($0.value)); " }.joined()
        let script = exports + "exec \"$0\" " + arguments.map(shellWord).joined(separator: " ")
        return try Child("/bin/sh", ["-c", script, try latchkeyPath()]).finish(writing: Data(input.utf8))
    }

    static func words(_ text: String...) -> [[UInt8]] { text.map { Array($0.utf8) } }

    @Test("two session names differing only in bytes that are not UTF-8 are refused, not made one session")
    func sessionNames() throws {
        let store = try Store("file")
        let options = store.options.map { Array($0.utf8) }
        for last: UInt8 in [0xFF, 0xFE] {
            let run = try Self.run(options + Self.words("session", "put") + [[UInt8(ascii: "n"), last]], input: "t\n")
            #expect(run.status == 64, "\(run.stderr)")
            #expect(run.stderr.contains("the NAME argument is not valid UTF-8"), "\(run.stderr)")
        }
        let sessions = try #require(try store.json(["session", "list"])["sessions"] as? [Any])
        #expect(sessions.isEmpty, "no session was stored: \(sessions)")
    }

    @Test(
        "an option's value that is not UTF-8 is refused, naming the option",
        arguments: ["--account", "--app", "--store-dir", "--policy"])
    func optionValues(option: String) throws {
        let store = try Store("file")
        let run = try Self.run(
            store.options.map { Array($0.utf8) } + [Array(option.utf8), Array("/a/b".utf8) + [0xFF]]
                + Self.words("session", "list"))
        #expect(run.status == 64, "\(option): \(run.stderr)")
        #expect(run.stderr.contains("the value of \(option) is not valid UTF-8"), "\(run.stderr)")
    }

    @Test(
        "a store directory, an app id or a home in a variable that is not UTF-8 is refused, not mapped to another",
        arguments: ["LATCHKEY_HOME", "XDG_DATA_HOME", "HOME", "LATCHKEY_APP", "LATCHKEY_POLICY"])
    func variables(name: String) throws {
        let work = try freshDirectory()
        var environment = ["LATCHKEY_HOME": Array((work + "/store").utf8)]
        environment[name] = Array((work + "/").utf8) + [0xFF]
        let run = try Self.run(
            Self.words("--backend", "file", "username", "remember", "alice"), environment: environment)
        #expect(run.status == 64, "\(name): \(run.stderr)")
        #expect(run.stderr.contains("the environment variable \(name) is not valid UTF-8"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty, "nothing was created")
    }
}
