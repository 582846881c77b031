import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension POSIX.File {
    /// The whole file, however long: for tests, which read what they wrote.
    func readAll() throws -> [UInt8] { try readAll(limit: 1 << 40) }
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
