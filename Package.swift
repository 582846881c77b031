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
        .systemLibrary(
            name: "CSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .target(
            name: "Latchkey",
            dependencies: ["CSodium", "CSecret"]
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
        .testTarget(
            name: "LatchkeyTests",
            dependencies: ["Latchkey", "LatchkeyTesting", "CredentialHelpers"]
        ),
        .target(
            name: "LoginFlow",
            dependencies: ["Latchkey"]
        ),
        // Runs the built `latchkey` binary as a subprocess (built by `swift build --build-tests`).
        .testTarget(
            name: "CLITests",
            dependencies: ["latchkey", "Latchkey"]
        ),
        .testTarget(
            name: "LoginFlowTests",
            dependencies: ["LoginFlow", "Latchkey", "LatchkeyTesting"]
        ),
        // Benchmarks and the reliability harness (make bench, make stress); never installed.
        .executableTarget(
            name: "latchkey-bench",
            dependencies: ["Latchkey", "CredentialHelpers"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
