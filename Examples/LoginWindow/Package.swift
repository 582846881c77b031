// swift-tools-version:6.0
import PackageDescription

// The login window example: a GTK 4 screen on LoginFlow and a real Vault.
// Its own package, so GTK never becomes a dependency of the Latchkey library.
let package = Package(
    name: "LoginWindow",
    dependencies: [
        .package(name: "Latchkey", path: "../..")
    ],
    targets: [
        // GTK 4 itself: headers and flags from pkg-config.
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"])]
        ),
        // What Swift cannot call directly: the typed forms of the g_signal_connect macro.
        .target(
            name: "CGtkShims",
            dependencies: ["CGtk"]
        ),
        .executableTarget(
            name: "login-window",
            dependencies: [
                "CGtk",
                "CGtkShims",
                .product(name: "Latchkey", package: "Latchkey"),
                .product(name: "LatchkeyLoginFlow", package: "Latchkey"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
