import Testing
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import Latchkey

/// A fresh private directory for one test, inside the sandbox `.ci/with-keyring`
/// makes (and removes afterwards), or under /tmp when run without it.
func makeTemporaryDirectory(_ label: String = #function) throws -> String {
    let sandbox = ProcessInfo.processInfo.environment["LATCHKEY_TEST_SANDBOX"] ?? "/tmp"
    let base = "\(sandbox)/latchkey-tests-\(POSIX.processID)"
    try PrivateFiles.prepareDirectory(base)
    let name = label.filter { $0.isLetter || $0.isNumber } + "-" + Sodium.randomBytes(count: 6).map { String($0, radix: 16) }.joined()
    let path = base + "/" + name
    try PrivateFiles.prepareDirectory(path)
    return path
}

/// The whole content of a file.
func fileBytes(_ path: String) throws -> [UInt8] {
    try POSIX.File.open(path, .read).readAll()
}

/// Replaces a file's content in place, without the library's atomic machinery.
func overwrite(_ path: String, with bytes: [UInt8]) throws {
    let file = try POSIX.File.open(path, .readWriteCreate(permissions: 0o600))
    try file.truncate(to: 0)
    try file.writeAll(bytes)
}

/// The error code `body` throws, or nil when it does not throw.
func errorCode(_ body: () throws -> Void) -> LatchkeyError.Code? {
    do {
        try body()
        return nil
    } catch let error as LatchkeyError {
        return error.code
    } catch {
        return .internal
    }
}

