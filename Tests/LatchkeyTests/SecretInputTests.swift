import Testing
import Glibc
@testable import Latchkey

@Suite("Secret input")
struct SecretInputTests {
    /// Writes `bytes` into a pipe, closes the write end, and returns the read end.
    private func pipeHolding(_ bytes: [UInt8]) -> Int32 {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0)
        _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        return ends[0]
    }

    @Test("reads a descriptor to its end and strips exactly one trailing newline", arguments: [
        ("token\n", "token"), ("token", "token"), ("token\n\n", "token\n"), ("", ""), ("multi\nline\n", "multi\nline"),
    ])
    func descriptor(input: String, expected: String) throws {
        let fd = pipeHolding(Array(input.utf8))
        defer { close(fd) }
        #expect(try SecretInput.read(fromDescriptor: fd) == SecretBytes(utf8: expected))
    }

    @Test("reads more than one buffer's worth of binary bytes")
    func large() throws {
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }.filter { $0 != 10 }
        let path = try makeTemporaryDirectory() + "/large"
        try PrivateFiles.replace(path, with: bytes)
        let file = try POSIX.File.open(path, .read)
        #expect(try SecretInput.read(fromDescriptor: file.descriptor).copyBytes() == bytes)
    }

    @Test("a passphrase file must be private")
    func filePermissions() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/passphrase"
        try PrivateFiles.replace(path, with: Array("correct horse\n".utf8))
        #expect(try SecretInput.read(fromFile: path) == SecretBytes(utf8: "correct horse"))
        #expect(chmod(path, 0o644) == 0)
        let error = #expect(throws: LatchkeyError.self) { try SecretInput.read(fromFile: path) }
        #expect(error?.code == .insecurePermissions)
    }
}
