import Foundation
import LatchkeyTestSupport
import Testing

/// A fresh app namespace and store directory on one backend: every test gets its own.
struct Store: CustomTestStringConvertible, Sendable {
    let backend: String
    let directory: String
    let app: String
    var storeDirectory: String

    /// - Parameter reachesService: False when the test points the Secret Service at no bus or a
    ///   broken one, so it needs no keyring.
    /// - Throws: A skip of the test case when `backend` is the Secret Service, the test reaches it,
    ///   and this run has none (``SecretServiceGate``).
    init(_ backend: String, _ label: String = #function, reachesService: Bool = true) throws {
        if backend == "secret-service" && reachesService { try SecretServiceGate.require() }
        self.backend = backend
        directory = try freshDirectory(label)
        storeDirectory = directory + "/store"
        app = "cli-test-" + UUID().uuidString.prefix(12).lowercased()
    }

    /// The path of one of this namespace's files in its directory `<store>/<app>.d`,
    /// such as `credentials.vault`, `credentials.key` or `audit.file.jsonl` (docs/FILE-FORMAT.md).
    func namespaceFile(_ name: String) -> String {
        storeDirectory + "/\(app).d/\(name)"
    }

    /// The encrypted vault file.
    var vaultPath: String { namespaceFile("credentials.vault") }
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
