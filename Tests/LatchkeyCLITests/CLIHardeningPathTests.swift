import Foundation
import LatchkeyTestSupport
import Testing

/// Relative paths and `~` (issue 14, item 10): the same command finds the same
/// store and policy whatever the current directory, or refuses to run.
@Suite("latchkey resolves store and policy paths the same from every directory", .sandboxed)
struct CLIHardeningPathTests {
    static let options = ["--backend", "file", "--app", "paths-test"]

    @Test("a relative or unexpanded ~ store directory, or a relative or missing HOME, is a usage error saying which")
    func relativeStoreDirectory() throws {
        let cases: [(options: [String], environment: [String: String?], fragment: String)] = [
            (["--store-dir", "store"], [:], "--store-dir 'store' is not an absolute path"),
            (["--store-dir=~/store"], [:], "starts with '~'"),
            ([], ["LATCHKEY_HOME": "relative/store"], "LATCHKEY_HOME 'relative/store' is not an absolute path"),
            (
                [], ["LATCHKEY_HOME": nil, "XDG_DATA_HOME": nil, "HOME": "relative-home"],
                "HOME ('relative-home') is not an absolute path"
            ),
            (
                [], ["LATCHKEY_HOME": nil, "XDG_DATA_HOME": "data", "HOME": nil],
                "HOME is not set and XDG_DATA_HOME is not an absolute path"
            ),
        ]
        for (options, environment, fragment) in cases {
            let work = try freshDirectory()
            let run = try Child(
                try latchkeyPath(), options + Self.options + ["session", "list"], environment: environment,
                directory: work
            ).finish()
            #expect(run.status == 64, "\(options) \(environment): \(run.stderr)")
            #expect(run.stderr.contains(fragment), "\(run.stderr)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: work).isEmpty,
                "nothing may be created in the current directory")
        }
    }

    @Test("a relative XDG_DATA_HOME or XDG_CONFIG_HOME is ignored: the same store and policy from every directory")
    func relativeXDGIgnored() throws {
        let home = try freshDirectory()
        var seen: Set<String> = []
        for _ in 0..<2 {
            let work = try freshDirectory()
            try FileManager.default.createDirectory(
                atPath: work + "/config/latchkey", withIntermediateDirectories: true)
            try #"{"version": 1, "name": "relative"}"#.write(
                toFile: work + "/config/latchkey/policy.json", atomically: true, encoding: .utf8)
            let environment: [String: String?] = [
                "HOME": home, "XDG_DATA_HOME": "data", "XDG_CONFIG_HOME": "config", "LATCHKEY_HOME": nil,
            ]
            let run = try Child(
                try latchkeyPath(), ["--json"] + Self.options + ["status"], environment: environment, directory: work
            ).finish()
            #expect(run.status == 0, "\(run.stderr)")
            let status = try run.json()
            seen.insert(status["storeDirectory"] as? String ?? "")
            #expect((status["policy"] as? [String: Any])?["name"] as? String == "default")
            #expect(!FileManager.default.fileExists(atPath: work + "/data"))
        }
        #expect(seen == [home + "/.local/share/latchkey"])
    }
}
