import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Encrypted file backend refuses files others can reach", .sandboxed)
struct EncryptedFilePermissionTests {
    enum Target: String, CaseIterable, CustomTestStringConvertible {
        case vault, keyFile, directory
        var testDescription: String { rawValue }
        func path(of backend: EncryptedFileBackend) -> String {
            switch self {
            case .vault: return backend.vaultPath
            case .keyFile: return backend.keyFilePath
            case .directory: return backend.directory
            }
        }
    }

    /// A key-file vault with one item, and its item key.
    private func populated(label: String = #function) throws -> (EncryptedFileBackend, ItemKey) {
        let backend = try makeFileBackend(.keyFile, label: label)
        let key = ItemKey(kind: .username, name: "last")
        try backend.write(StoredItem(value: SecretBytes(utf8: "alice")), for: key)
        return (backend, key)
    }

    /// Expects reads and writes, by the same and by a fresh instance, to be refused naming `path`.
    private func expectRefused(_ backend: EncryptedFileBackend, _ key: ItemKey, naming path: String) {
        let fresh = EncryptedFileBackend(appID: testAppID, directory: backend.directory, keySource: .keyFile)
        for instance in [backend, fresh] {
            let readError = #expect(throws: LatchkeyError.self) { _ = try instance.read(key) }
            #expect(readError?.code == .insecurePermissions)
            #expect(readError?.message.contains(path) == true, "\(readError?.message ?? "")")
            let writeError = #expect(throws: LatchkeyError.self) {
                try instance.write(StoredItem(value: SecretBytes(utf8: "bob")), for: key)
            }
            #expect(writeError?.code == .insecurePermissions)
        }
    }

    @Test(
        "group- or world-accessible vault, key file or directory is refused, naming the path",
        arguments: Target.allCases, [0o640, 0o604, 0o660, 0o644, 0o755])
    func openModes(target: Target, mode: Int) throws {
        let (backend, key) = try populated()
        let path = target.path(of: backend)
        let before = try fileBytes(backend.vaultPath)
        let mode = target == .directory ? mode | 0o700 : mode & 0o666
        #expect(chmod(path, mode_t(mode)) == 0)
        expectRefused(backend, key, naming: path)
        #expect(chmod(path, target == .directory ? 0o700 : 0o600) == 0)
        #expect(try fileBytes(backend.vaultPath) == before)
        #expect(try backend.read(key)?.value == SecretBytes(utf8: "alice"))
    }

    @Test(
        "a vault, key file or directory owned by another user is refused",
        .enabled(if: geteuid() == 0, "needs root to give a file away"), arguments: Target.allCases)
    func foreignOwner(target: Target) throws {
        let (backend, key) = try populated()
        let path = target.path(of: backend)
        #expect(chown(path, 65534, 65534) == 0)
        expectRefused(backend, key, naming: path)
    }

    @Test("a vault that is a symbolic link is refused")
    func symbolicLink() throws {
        let (backend, key) = try populated()
        let real = backend.directory + "/elsewhere"
        #expect(rename(backend.vaultPath, real) == 0)
        #expect(symlink(real, backend.vaultPath) == 0)
        let fresh = EncryptedFileBackend(appID: testAppID, directory: backend.directory, keySource: .keyFile)
        let error = #expect(throws: LatchkeyError.self) { _ = try fresh.read(key) }
        #expect(error?.code == .insecurePermissions && error?.message.contains(backend.vaultPath) == true)
    }
}
