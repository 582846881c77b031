import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// A vault belongs to its app namespace (format version 2): one copied over
/// another app's is refused as tampered; version 1 vaults are still read and
/// become version 2, bound to their namespace, at their next save.
@Suite("Vault bound to its app")
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

    @Test("a version 1 vault is read, and its next save writes version 2 bound to the namespace with the same keys")
    func upgradesVersion1() throws {
        let store = try freshDirectory() + "/store"
        let backend = EncryptedFileBackend(appID: try AppID("com.example.v1"), directory: store, keySource: .keyFile)
        try backend.namespace.prepare()
        let master = SecretBytes.random(count: KeyFile.length)
        #expect(try PrivateFiles.createIfAbsent(backend.keyFilePath, with: master))
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltLength)
        let keys = VaultKeys(master: master, salt: salt)
        let header = VaultHeader(
            version: 1, source: .keyFile, kdf: nil, salt: salt, generation: 4, keyCheck: keys.check)
        let old = VaultFormat.seal(
            [Self.access: StoredItem(value: SecretBytes(utf8: "from v1"))], header: header, keys: keys)
        try PrivateFiles.replace(backend.vaultPath, with: old)

        #expect(try backend.read(Self.access)?.value == SecretBytes(utf8: "from v1"))
        try backend.write(StoredItem(value: SecretBytes(utf8: "new")), for: ItemKey(kind: .session, name: "second"))
        let upgraded = try VaultHeader.decode(fileBytes(backend.vaultPath), path: backend.vaultPath)
        #expect(upgraded.version == 2 && upgraded.appID == "com.example.v1")
        #expect(upgraded.salt == salt && upgraded.keyCheck == keys.check && upgraded.generation == 5)
        let fresh = EncryptedFileBackend(appID: backend.appID, directory: store, keySource: .keyFile)
        #expect(try fresh.read(Self.access)?.value == SecretBytes(utf8: "from v1"))
    }
}
