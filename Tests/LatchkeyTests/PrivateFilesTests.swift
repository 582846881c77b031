import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Private files", .sandboxed)
struct PrivateFilesTests {
    @Test("prepareDirectory creates missing parents with mode 0700")
    func createsPrivateDirectories() throws {
        let root = try freshDirectory()
        try PrivateFiles.prepareDirectory(root + "/a/b")
        #expect(try POSIX.status(of: root + "/a")?.permissions == 0o700)
        #expect(try POSIX.status(of: root + "/a/b")?.permissions == 0o700)
    }

    @Test(
        "group- or world-accessible files and directories are refused, naming the path",
        arguments: [0o640, 0o604, 0o660, 0o666])
    func refusesOpenPermissions(mode: Int) throws {
        let root = try freshDirectory()
        let file = root + "/vault"
        try PrivateFiles.replace(file, with: [1, 2, 3])
        #expect(chmod(file, mode_t(mode)) == 0)
        let error = #expect(throws: LatchkeyError.self) { try PrivateFiles.requirePrivate(file, directory: false) }
        #expect(error?.code == .insecurePermissions)
        #expect(error?.message.contains(file) == true)
        #expect(chmod(root, 0o750) == 0)
        let dirError = #expect(throws: LatchkeyError.self) { try PrivateFiles.requirePrivate(root, directory: true) }
        #expect(dirError?.code == .insecurePermissions)
    }

    @Test("replace writes a 0600 file atomically and leaves no temporary file")
    func replaceIsAtomic() throws {
        let root = try freshDirectory()
        let file = root + "/data"
        try PrivateFiles.replace(file, with: Array("first".utf8))
        try PrivateFiles.replace(file, with: Array("second".utf8))
        #expect(try POSIX.File.open(file, .read).readAll() == Array("second".utf8))
        #expect(try POSIX.status(of: file)?.permissions == 0o600)
        #expect(try POSIX.directoryEntries(root) == ["data"])
    }

    @Test("leftover temporary files of a crashed writer are removed")
    func removesLeftovers() throws {
        let root = try freshDirectory()
        let file = root + "/data"
        let leftover = root + "/" + PrivateFiles.temporaryPrefix + "data.0123"
        _ = try POSIX.File.open(leftover, .createNew(permissions: 0o600))
        try PrivateFiles.removeLeftovers(of: file)
        #expect(try POSIX.status(of: leftover) == nil)
    }
}
