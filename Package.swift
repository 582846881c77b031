// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Latchkey",
    products: [
        .library(name: "Latchkey", targets: ["Latchkey"]),
        .library(name: "LatchkeyTesting", targets: ["LatchkeyTesting"]),
        .executable(name: "latchkey", targets: ["latchkey"]),
        .library(name: "LoginFlow", targets: ["LoginFlow"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // libsecret, GIO and GLib through dlopen on first use (loader.c): declared
        // without their headers and never linked, so a process that does not reach
        // the Secret Service does not load them and a host without libsecret still runs.
        .target(
            name: "CSecret",
            exclude: ["functions.h"],
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // Linux calls Swift cannot make directly (prctl is variadic): static inline C in a header.
        .systemLibrary(name: "CLinux"),
        .target(
            name: "Latchkey",
            dependencies: ["CSodium", "CSecret", "CLinux"]
        ),
        .target(
            name: "LatchkeyTesting",
            dependencies: ["Latchkey"]
        ),
        // Adapters for other tools' credential-helper protocols (git), over the public Vault.
        .target(
            name: "CredentialHelpers",
            dependencies: ["Latchkey"]
        ),
        .executableTarget(
            name: "latchkey",
            dependencies: ["Latchkey", "CredentialHelpers"]
        ),
        // Launched by the encrypted-file tests as a separate process; never installed.
        .executableTarget(
            name: "latchkey-testhelper",
            dependencies: ["Latchkey"]
        ),
        // What every test target shares: sandbox directories, the built-binary
        // locator, the process runner and the canary scan.
        .target(
            name: "LatchkeyTestSupport",
            path: "Tests/Support"
        ),
        .testTarget(
            name: "LatchkeyTests",
            dependencies: ["Latchkey", "LatchkeyTesting", "CredentialHelpers", "LatchkeyTestSupport"]
        ),
        .target(
            name: "LoginFlow",
            dependencies: ["Latchkey"]
        ),
        // Runs the built `latchkey` binary as a subprocess (built by `swift build --build-tests`).
        .testTarget(
            name: "CLITests",
            dependencies: ["latchkey", "Latchkey", "LatchkeyTestSupport"]
        ),
        .testTarget(
            name: "LoginFlowTests",
            dependencies: ["LoginFlow", "Latchkey", "LatchkeyTesting", "LatchkeyTestSupport"]
        ),
        // Benchmarks and the reliability harness (make bench, make stress); never installed.
        .executableTarget(
            name: "latchkey-bench",
            dependencies: ["Latchkey", "CredentialHelpers"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
