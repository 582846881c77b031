// swift-tools-version:6.0
import PackageDescription

// An app's test package that depends on Latchkey by path, as an app does, and shows
// what issue 26 asked of the library from outside it (scripts/check-external-app,
// which `make test` runs, copies it beside a link named latchkey to this checkout).
let package = Package(
    name: "ExternalApp",
    dependencies: [.package(path: "../latchkey")],
    targets: [
        // The process's dumpable flag, read with prctl by the app itself, not by Latchkey.
        .target(name: "CProbe"),
        .testTarget(
            name: "ExternalAppTests",
            dependencies: [
                "CProbe",
                .product(name: "Latchkey", package: "latchkey"),
                .product(name: "LatchkeyTesting", package: "latchkey"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
