import Foundation

/// A fresh private (0700) directory for one test, inside the sandbox that
/// `.ci/with-keyring` makes and removes afterwards (`LATCHKEY_TEST_SANDBOX`),
/// or under the system's temporary directory when run without it.
/// - Parameter label: Part of the name, for finding it when a test fails; the test's name by default.
/// - Returns: The directory's path.
public func freshDirectory(_ label: String = #function) throws -> String {
    let base = ProcessInfo.processInfo.environment["LATCHKEY_TEST_SANDBOX"] ?? NSTemporaryDirectory()
    let name = label.filter { $0.isLetter || $0.isNumber }.prefix(40) + "-" + UUID().uuidString.prefix(8)
    let path = (base as NSString).appendingPathComponent(String(name))
    try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}

/// An error of the test support itself, such as a missing binary.
public struct TestSupportError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// Creates an error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// An executable product of this package, built next to the test bundle by
/// `swift build --build-tests` (which `make test` runs).
/// - Parameter name: The product, such as `latchkey` or `latchkey-testhelper`.
/// - Returns: Its path.
/// - Throws: ``TestSupportError`` when it has not been built.
public func builtProductPath(_ name: String) throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    // `swift test` runs `<bin>/LatchkeyPackageTests.xctest`; step out of a bundle directory if there is one.
    while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS" {
        directory.deleteLastPathComponent()
    }
    let path = directory.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw TestSupportError("\(path) is missing; build it with `swift build --build-tests` (make test does)")
    }
    return path
}

/// The built `latchkey` binary.
public func latchkeyPath() throws -> String { try builtProductPath("latchkey") }

/// The built `latchkey-testhelper` binary, which the file and audit tests run as a second process.
public func testHelperPath() throws -> String { try builtProductPath("latchkey-testhelper") }
