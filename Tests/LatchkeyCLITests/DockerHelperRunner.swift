import Foundation
import LatchkeyTestSupport
import Testing

/// The built binary invoked as `docker-credential-latchkey` (a symlink in the
/// store's directory, as `make install` puts one beside `latchkey`), with the
/// store's global options before the action, as a test may give them.
struct DockerHelper {
    let store: Store
    let path: String

    init(_ store: Store) throws {
        self.store = store
        let bin = store.directory + "/bin"
        path = bin + "/docker-credential-latchkey"
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: try latchkeyPath())
        }
    }

    /// Runs one action with `input` on standard input, the store's options first unless `options` replaces them.
    /// Input larger than a pipe holds comes from a file, so a helper that stops
    /// reading at its limit cannot leave the test writing into a closed pipe.
    @discardableResult
    func run(_ action: String, input: String = "", options: [String]? = nil, environment: [String: String?] = [:])
        throws -> Run
    {
        let arguments = (options ?? store.options) + [action]
        guard input.utf8.count > 1 << 16 else {
            return try latchkey(arguments, input: input, environment: environment, executable: path)
        }
        let file = store.directory + "/large-input"
        try Data(input.utf8).write(to: URL(fileURLWithPath: file))
        var environment = environment
        environment["LATCHKEY_TEST_INPUT"] = file
        return try Child(
            "/bin/sh", ["-c", #"exec "$0" "$@" < "$LATCHKEY_TEST_INPUT""#, path] + arguments, environment: environment
        ).finish()
    }

    /// Stores a credential as docker does (`docker login`).
    func store(_ serverURL: String, _ username: String, _ secret: String) throws {
        let run = try run(
            "store", input: #"{"ServerURL":"\#(serverURL)","Username":"\#(username)","Secret":"\#(secret)"}"#)
        #expect(run.status == 0 && run.stdout.isEmpty, "\(run.text) \(run.stderr)")
    }

    /// The JSON object `list` prints.
    func list() throws -> [String: String] {
        let run = try run("list")
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: String])
    }

    /// The JSON object `get` prints, or nil after checking the exact "not found" answer.
    func get(_ serverURL: String) throws -> [String: String]? {
        let run = try run("get", input: serverURL + "\n")
        if run.status == 1 {
            #expect(run.text == "credentials not found in native keychain\n")
            return nil
        }
        #expect(run.status == 0, "\(run.text) \(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: String])
    }
}
