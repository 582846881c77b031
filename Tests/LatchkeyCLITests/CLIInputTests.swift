import Foundation
import Glibc
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

@Suite("Command-line input and exit statuses", .sandboxed)
struct CLIInputTests {
    /// Writes `bytes` into a pipe, closes the write end, and returns the read end.
    private func pipeHolding(_ bytes: [UInt8]) -> Int32 {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0)
        _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        return ends[0]
    }

    @Test(
        "reads a descriptor to its end and strips exactly one trailing newline",
        arguments: [
            ("token\n", "token"), ("token", "token"), ("token\n\n", "token\n"), ("", ""),
            ("multi\nline\n", "multi\nline"),
        ])
    func descriptor(input: String, expected: String) throws {
        let fd = pipeHolding(Array(input.utf8))
        defer { close(fd) }
        #expect(try SecretInput.read(fromDescriptor: fd) == SecretBytes(utf8: expected))
    }

    @Test("reads more than one buffer's worth of binary bytes")
    func large() throws {
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }.filter { $0 != 10 }
        let path = try freshDirectory() + "/large"
        #expect(
            FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        let file = try #require(FileHandle(forReadingAtPath: path))
        #expect(try SecretInput.read(fromDescriptor: file.fileDescriptor).copyBytes() == bytes)
    }

    @Test("a passphrase file must be private")
    func filePermissions() throws {
        let path = try freshDirectory() + "/passphrase"
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data("correct horse\n".utf8), attributes: [.posixPermissions: 0o600]))
        #expect(try SecretInput.read(fromFile: path) == SecretBytes(utf8: "correct horse"))
        #expect(chmod(path, 0o644) == 0)
        let error = #expect(throws: LatchkeyError.self) { try SecretInput.read(fromFile: path) }
        #expect(error?.code == .insecurePermissions)
    }

    @Test(
        "every error code maps to its documented exit status",
        arguments: [
            (LatchkeyError.Code.notFound, Int32(1)),
            (.usage, 64), (.tampered, 65), (.invalidInput, 65), (.unavailable, 69),
            (.internal, 70), (.cannotCreate, 73), (.io, 74), (.locked, 75), (.timedOut, 75),
            (.wrongKey, 77), (.insecurePermissions, 77), (.policyDenied, 77),
        ])
    func exitStatus(code: LatchkeyError.Code, status: Int32) {
        #expect(code.exitStatus == status)
    }

    @Test("an unknown error code maps to the internal-error status")
    func unknownCode() {
        #expect(LatchkeyError.Code(rawValue: "fromTheFuture").exitStatus == 70)
    }
}
