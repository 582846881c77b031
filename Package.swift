// swift-tools-version:6.0
import PackageDescription

// The library's test seams (task-local observers and failure injection) are compiled only
// into a debug build made with LATCHKEY_TEST_SEAMS=1 in its environment, as `make test` makes
// it: an app that depends on Latchkey, a plain `swift build` and every release build carry none.
let testSeams: [SwiftSetting] =
    Context.environment["LATCHKEY_TEST_SEAMS"] == "1"
    ? [.define("LATCHKEY_TEST_SEAMS", .when(configuration: .debug))] : []
let testSeamsInC: [CSetting] =
    Context.environment["LATCHKEY_TEST_SEAMS"] == "1"
    ? [.define("LATCHKEY_TEST_SEAMS", .when(configuration: .debug))] : []

let package = Package(
    name: "Latchkey",
    products: [
        .library(name: "Latchkey", targets: ["Latchkey"]),
        .library(name: "LatchkeyTesting", targets: ["LatchkeyTesting"]),
        .executable(name: "latchkey", targets: ["LatchkeyCLI"]),
        .library(name: "LatchkeyLoginFlow", targets: ["LatchkeyLoginFlow"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLatchkeySodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // libsecret, GIO and GLib through dlopen on first use (loader.c): declared
        // without their headers and never linked, so a process that does not reach
        // the Secret Service does not load them and a host without libsecret still runs.
        .target(
            name: "CLatchkeySecret",
            exclude: ["functions.h"],
            cSettings: testSeamsInC,
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // libgcrypt, for the Secret Service provider's DH sessions, through dlopen on first use
        // (loader.c, which includes gcrypt.h to check its calls): never linked, so a process that
        // does not serve or unlock the provider does not load it.
        .target(
            name: "CLatchkeyGcrypt",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // Linux calls Swift cannot make directly (prctl is variadic): static inline C in a header.
        .systemLibrary(name: "CLatchkeyLinux"),
        .target(
            name: "Latchkey",
            dependencies: ["CLatchkeySodium", "CLatchkeySecret", "CLatchkeyLinux"],
            swiftSettings: testSeams
        ),
        .target(
            name: "LatchkeyTesting",
            dependencies: ["Latchkey"]
        ),
        // Adapters for other tools' credential-helper protocols (git), over the public Vault.
        .target(
            name: "LatchkeyCredentialHelpers",
            dependencies: ["Latchkey"]
        ),
        // The tools' one system layer (docs/ARCHITECTURE.md): spawning processes, local
        // sockets and passed descriptors, the terminal, signals and the standard streams, for
        // the CLI, the agent and the bench. Every C call of theirs is in its Internals/; an
        // interrupted call is retried only by the library's POSIX.valueOrErrno. Nothing is public.
        .target(
            name: "LatchkeySystem",
            dependencies: ["Latchkey", "CLatchkeyLinux"]
        ),
        // The store commands (docs/ARCHITECTURE.md): the typed command and the namespace it works
        // in, both resolved in the client, where a command gets its vault (VaultSource), and the
        // code that runs a command against a vault and gives back its output, exit status and
        // report as a value (StoreCommandRunner), which the command line and the agent both call.
        // No command line, environment or terminal here; nothing here is public.
        .target(
            name: "LatchkeyCommands",
            dependencies: ["Latchkey", "LatchkeyCredentialHelpers"]
        ),
        // The per-user agent (docs/AGENT.md): its protocol, the server with its namespace
        // queues and pool of open vaults, and the client's checks and hand-off. A request runs
        // through LatchkeyCommands' StoreCommandRunner; nothing here is public.
        .target(
            name: "LatchkeyAgent",
            dependencies: ["Latchkey", "LatchkeySystem", "LatchkeyCommands", "LatchkeyProvider"]
        ),
        // The Secret Service provider (docs/SECRET-SERVICE-PROVIDER.md): serves
        // org.freedesktop.secrets through GDBus from a file vault of its own, for the agent
        // to start (`latchkey agent run --secret-service`); nothing here is public.
        .target(
            name: "LatchkeyProvider",
            dependencies: ["Latchkey", "CLatchkeySecret", "CLatchkeyGcrypt"]
        ),
        // The `latchkey` command (product `latchkey`); also git-credential-latchkey and
        // docker-credential-latchkey by the name it is run under.
        .executableTarget(
            name: "LatchkeyCLI",
            dependencies: [
                "Latchkey", "LatchkeyAgent", "LatchkeyCommands", "LatchkeyCredentialHelpers", "LatchkeySystem",
                "LatchkeyProvider",
            ]
        ),
        // Launched by the encrypted-file tests as a separate process; never installed.
        .executableTarget(
            name: "latchkey-testhelper",
            dependencies: ["Latchkey"],
            swiftSettings: testSeams
        ),
        // What every test target shares: sandbox directories, the built-binary
        // locator, the process runner and the canary scan.
        .target(
            name: "LatchkeyTestSupport",
            path: "Tests/Support",
            swiftSettings: testSeams
        ),
        .testTarget(
            name: "LatchkeyTests",
            dependencies: ["Latchkey", "LatchkeyTesting", "LatchkeyCredentialHelpers", "LatchkeyTestSupport"],
            swiftSettings: testSeams
        ),
        .target(
            name: "LatchkeyLoginFlow",
            dependencies: ["Latchkey"]
        ),
        // Runs the built `latchkey` binary as a subprocess (built by `swift build --build-tests`).
        .testTarget(
            name: "LatchkeyCLITests",
            dependencies: [
                "LatchkeyCLI", "Latchkey", "LatchkeyAgent", "LatchkeyCommands", "LatchkeySystem", "LatchkeyTestSupport",
            ]
        ),
        // The agent's server over socketpairs with a manual clock and a recording executor.
        .testTarget(
            name: "LatchkeyAgentTests",
            dependencies: ["LatchkeyAgent", "LatchkeyCommands", "LatchkeySystem", "Latchkey", "LatchkeyTestSupport"]
        ),
        // Runs the built `latchkey` agent as the Secret Service on a private bus, with real clients.
        .testTarget(
            name: "LatchkeyProviderTests",
            dependencies: ["LatchkeyProvider", "Latchkey", "LatchkeyTestSupport"]
        ),
        .testTarget(
            name: "LatchkeyLoginFlowTests",
            dependencies: ["LatchkeyLoginFlow", "Latchkey", "LatchkeyTesting", "LatchkeyTestSupport"]
        ),
        // Benchmarks and the reliability harness (make bench, make stress); never installed.
        .executableTarget(
            name: "latchkey-bench",
            dependencies: ["Latchkey", "LatchkeyCredentialHelpers", "LatchkeySystem"]
        ),
        // A Swift program that prints one line: the start-up floor the benchmarks hold
        // `latchkey --version` against (make bench); never installed.
        .executableTarget(name: "latchkey-floor"),
    ],
    swiftLanguageModes: [.v6]
)
