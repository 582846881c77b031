import Foundation
import LatchkeyTestSupport
import Testing

/// libsecret, GIO and GLib are loaded (dlopen) only when the Secret Service is
/// used, and libgcrypt only when the Secret Service provider is; none is linked:
/// checked on the built binaries and on `latchkey` processes.
@Suite("libsecret is loaded on first use", .sandboxed)
struct CLILibSecretLoadingTests {
    /// The libraries no binary may name as needed: libsecret and what it brings, and the
    /// provider's libgcrypt (which libsecret brings too) with its libgpg-error.
    static let lazyLibraries = [
        "libsecret-1", "libgio-2.0", "libgobject-2.0", "libglib-2.0", "libgcrypt", "libgpg-error",
    ]

    /// A path that is not there, for `LATCHKEY_LIBSECRET_PATH` (the loader's test seam):
    /// the process then behaves as on a host without libsecret.
    static let missingLibrary = "/nonexistent/latchkey-test/libsecret-1.so.0"

    /// Every command runs in its own process, whose libraries are the ones looked at (not an agent's).
    static let inProcess: [String: String?] = ["LATCHKEY_AGENT": "off"]

    /// Runs `latchkey` with the dynamic loader's library log (`LD_DEBUG=libs`) on
    /// standard error, and returns the run and the libraries the log shows loaded.
    static func runLogged(
        _ store: Store, _ arguments: [String], input: String = "",
        environment: [String: String?] = [:]
    ) throws -> (run: Run, loaded: [String]) {
        let run = try store.run(
            arguments, input: input,
            environment: environment.merging(inProcess) { $1 }.merging(["LD_DEBUG": "libs"]) { $1 })
        // The loader's lines look like "  12345:\tfind library=libsecret-1.so.0 [0]; searching".
        let loaded = run.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "find library=") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " && $0 != ";" })
        }
        return (run, loaded)
    }

    /// The lazily loaded libraries among `loaded`.
    static func lazy(_ loaded: [String]) -> [String] {
        loaded.filter { library in lazyLibraries.contains { library.hasPrefix($0) } }
    }

    @Test(
        "no binary linking Latchkey needs libsecret, GIO, GObject, GLib or libgcrypt (readelf -d)",
        arguments: ["latchkey", "latchkey-testhelper"])
    func notLinked(product: String) throws {
        let readelf = try runProgram("readelf", ["-d", try builtProductPath(product)])
        try #require(readelf.status == 0, "readelf failed: \(readelf.stderr)")
        let needed = readelf.lines.filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libsodium") }, "readelf shows no NEEDED entries: \(readelf.text)")
        for library in Self.lazyLibraries {
            #expect(!needed.contains { $0.contains("[\(library)") }, "\(product) needs \(library)")
        }
    }

    /// Foundation proper (with CoreFoundation, FoundationInternationalization and ICU), which
    /// only `Thread`, `FileHandle` and `replacingOccurrences` in the provider brought in: linked
    /// statically into the release binary it ran CoreFoundation's and ICU's initialisers in
    /// every process and kept about 5 MiB more of the idle agent resident (BENCHMARKS.md).
    @Test("latchkey needs FoundationEssentials only, not Foundation, CoreFoundation or ICU (readelf -d)")
    func foundationEssentialsOnly() throws {
        let readelf = try runProgram("readelf", ["-d", try builtProductPath("latchkey")])
        try #require(readelf.status == 0, "readelf failed: \(readelf.stderr)")
        let needed = readelf.lines.filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libsodium") }, "readelf shows no NEEDED entries: \(readelf.text)")
        for library in [
            "libFoundation.so", "libFoundationInternationalization", "lib_FoundationICU", "libCoreFoundation",
        ] {
            #expect(!needed.contains { $0.contains("[\(library)") }, "latchkey needs \(library)")
        }
    }

    @Test("--version and the file backend's session put and get never load libsecret or libgcrypt")
    func fileBackendDoesNotLoad() throws {
        let store = try Store("file")
        let version = try Self.runLogged(store, ["--version"])
        #expect(version.run.status == 0)
        #expect(
            version.loaded.contains { $0.hasPrefix("libsodium") },
            "LD_DEBUG=libs logged nothing: \(version.run.stderr.prefix(400))")
        #expect(Self.lazy(version.loaded).isEmpty)
        let put = try Self.runLogged(store, ["session", "put", "token"], input: "secret-token")
        #expect(put.run.status == 0, "\(put.run.stderr.suffix(400))")
        #expect(Self.lazy(put.loaded).isEmpty)
        let get = try Self.runLogged(store, ["session", "get", "token"])
        #expect(get.run.status == 0, "\(get.run.stderr.suffix(400))")
        #expect(get.run.text == "secret-token\n")
        #expect(Self.lazy(get.loaded).isEmpty)
    }

    @Test("auto with no session bus falls back to the file without loading libsecret")
    func noBusDoesNotLoad() throws {
        let store = try Store("auto")
        let noBus: [String: String?] = ["DBUS_SESSION_BUS_ADDRESS": nil, "XDG_RUNTIME_DIR": try freshDirectory()]
        let put = try Self.runLogged(store, ["session", "put", "token"], input: "t", environment: noBus)
        #expect(put.run.status == 0, "\(put.run.stderr.suffix(400))")
        #expect(Self.lazy(put.loaded).isEmpty)
    }

    @Test("the Secret Service loads libsecret when it is used")
    func secretServiceLoads() throws {
        let store = try Store("secret-service")
        let put = try Self.runLogged(store, ["session", "put", "token"], input: "t")
        #expect(put.run.status == 0, "\(put.run.stderr.suffix(400))")
        #expect(
            Self.lazy(put.loaded).contains { $0.hasPrefix("libsecret-1.so.0") },
            "libsecret was not loaded: \(put.loaded)")
    }

    @Test("without libsecret, auto falls back to the file and status says why", .needsSecretService, .needsTestSeams)
    func missingLibraryFallsBack() throws {
        let store = try Store("auto")
        let environment: [String: String?] = Self.inProcess.merging(["LATCHKEY_LIBSECRET_PATH": Self.missingLibrary]) {
            $1
        }
        let status = try store.run(["status"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.text.contains("backend: file"))
        #expect(
            status.text.contains("libsecret is not installed: \(Self.missingLibrary): cannot open shared object file"),
            "\(status.text)")
        #expect(try store.run(["session", "put", "token"], input: "t", environment: environment).status == 0)
        let get = try store.run(["session", "get", "token"], environment: environment)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.text == "t\n")
        #expect(
            FileManager.default.fileExists(atPath: store.vaultPath), "the session was not kept in the encrypted file")
        let json = try store.run(["--json", "status"], environment: environment).json()
        #expect(json["backend"] as? String == "file")
    }

    @Test("without libsecret, --backend secret-service exits 69 saying so", .needsTestSeams)
    func missingLibraryRequired() throws {
        let store = try Store("secret-service")
        let environment: [String: String?] = Self.inProcess.merging(["LATCHKEY_LIBSECRET_PATH": Self.missingLibrary]) {
            $1
        }
        let run = try store.run(["session", "get", "token"], environment: environment)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("latchkey: "))
        #expect(run.stderr.contains("libsecret is not installed"), "\(run.stderr)")
        let json = try store.run(["--json", "status"], environment: environment)
        #expect(json.status == 69)
        #expect(try json.errorCode() == "unavailable")
    }

    @Test("a library that lacks a function libsecret has is refused, not called", .needsSecretService, .needsTestSeams)
    func incompleteLibrary() throws {
        let store = try Store("auto")
        let sodium = ["/usr/lib/x86_64-linux-gnu/libsodium.so.23", "/usr/lib/aarch64-linux-gnu/libsodium.so.23"]
            .first { FileManager.default.fileExists(atPath: $0) }
        let library = try #require(sodium, "no libsodium.so.23 to stand in for an incomplete libsecret")
        let status = try store.run(
            ["status"], environment: Self.inProcess.merging(["LATCHKEY_LIBSECRET_PATH": library]) { $1 })
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.text.contains("backend: file"))
        #expect(
            status.text.contains("libsecret cannot be used: \(library) does not provide g_bus_get_sync"),
            "\(status.text)")
    }
}
