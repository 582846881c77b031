import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// A vault belongs to its app namespace (format version 2): one copied over
/// another app's is refused as tampered; a vault of the pre-release version 1
/// is refused, naming its version.
@Suite("Vault bound to its app", .sandboxed)
struct VaultBindingTests {
    static let access = ItemKey(kind: .session, account: "alice", name: "access")

    /// A backend of `app` in `store` holding one session.
    static func filled(_ app: String, _ store: String, _ source: KeySource = .keyFile) throws -> EncryptedFileBackend {
        let backend = EncryptedFileBackend(appID: try AppID(app), directory: store, keySource: source)
        try backend.write(StoredItem(value: SecretBytes(utf8: "token of \(app)")), for: access)
        return backend
    }

    @Test(
        "app A's vault copied over app B's, with its key file or under the same passphrase, is tampered",
        arguments: [false, true])
    func transplantRefused(passphrase: Bool) throws {
        let store = try freshDirectory() + "/store"
        let source: () -> KeySource = { passphrase ? fastPassphrase() : .keyFile }
        let a = try Self.filled("com.example.a", store, source())
        let b = try Self.filled("com.example.b", store, source())
        try overwrite(b.vaultPath, with: fileBytes(a.vaultPath))
        if !passphrase { try overwrite(b.keyFilePath, with: fileBytes(a.keyFilePath)) }
        let fresh = EncryptedFileBackend(appID: b.appID, directory: store, keySource: source())
        let error = #expect(throws: LatchkeyError.self) { _ = try fresh.read(Self.access) }
        #expect(error?.code == .tampered)
        #expect(error?.message.contains("com.example.a") == true, "\(String(describing: error))")
    }

    @Test("rewriting the header's app id (checksum recomputed) fails authentication")
    func headerEditRefused() throws {
        let store = try freshDirectory() + "/store"
        let a = try Self.filled("com.example.a", store)
        let b = try Self.filled("com.example.b", store)
        var bytes = try fileBytes(a.vaultPath)
        let id = Array("com.example.b".utf8)
        #expect(bytes[88] == UInt8(id.count))
        bytes.replaceSubrange(89..<(89 + id.count), with: id)
        let checksumStart = VaultHeader.length - VaultHeader.checksumLength
        bytes.replaceSubrange(
            checksumStart..<VaultHeader.length,
            with: Sodium.hash(bytes[..<checksumStart], length: VaultHeader.checksumLength))
        try overwrite(b.vaultPath, with: bytes)
        try overwrite(b.keyFilePath, with: fileBytes(a.keyFilePath))
        let fresh = EncryptedFileBackend(appID: b.appID, directory: store, keySource: .keyFile)
        #expect(errorCode { _ = try fresh.read(Self.access) } == .tampered)
    }

    @Test("a vault of the pre-release format version 1 is refused with an error naming the file and its version")
    func refusesVersion1() throws {
        let store = try freshDirectory() + "/store"
        let backend = EncryptedFileBackend(appID: try AppID("com.example.v1"), directory: store, keySource: .keyFile)
        try backend.write(StoredItem(value: SecretBytes(utf8: "v2")), for: Self.access)
        var bytes = try fileBytes(backend.vaultPath)
        // Version 1's header: the version and its complement at bytes 8..<12, then a 104-byte header.
        bytes.replaceSubrange(8..<12, with: [1, 0, 0xFE, 0xFF])
        try overwrite(backend.vaultPath, with: bytes)
        let fresh = EncryptedFileBackend(appID: backend.appID, directory: store, keySource: .keyFile)
        let refused = #expect(throws: LatchkeyError.self) { try fresh.read(Self.access) }
        #expect(refused?.code == .invalidInput)
        #expect(refused?.message.contains(backend.vaultPath) == true, "\(refused?.message ?? "")")
        #expect(refused?.message.contains("format version 1") == true, "\(refused?.message ?? "")")
    }
}
