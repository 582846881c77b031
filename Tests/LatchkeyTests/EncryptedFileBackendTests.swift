import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Argon2id parameters small enough that tests stay fast (libsodium's minimums).
let fastKDF = try! KDFParameters(opsLimit: 1, memoryLimit: 8192) // constant arguments, valid by construction

/// A passphrase key source with fast parameters.
func fastPassphrase(_ text: String = "correct horse battery staple") -> KeySource {
    .passphrase(SecretBytes(utf8: text), newVault: .fixed(fastKDF))
}

/// The two key sources the file tests run against.
enum TestKeySource: String, CaseIterable, CustomTestStringConvertible {
    case passphrase, keyFile
    var source: KeySource { self == .passphrase ? fastPassphrase() : .keyFile }
    var testDescription: String { rawValue }
}

let testAppID = try! AppID("com.example.notes") // a valid literal

/// A backend on a fresh private directory.
func makeFileBackend(_ source: KeySource = .keyFile, label: String = #function) throws -> EncryptedFileBackend {
    EncryptedFileBackend(appID: testAppID, directory: try freshDirectory(label) + "/store", keySource: source)
}

@Suite("Encrypted file backend", .sandboxed)
struct EncryptedFileBackendTests {
    static let values: [(String, [UInt8])] = [
        ("empty", []),
        ("64 KiB", Sodium.randomBytes(count: 64 * 1024)),
        ("all 256 byte values", (0...255).map { UInt8($0) }),
        ("non-ASCII", Array("Zoë · 密码 · 🔑".utf8)),
    ]

    @Test("values round-trip through a fresh instance", arguments: TestKeySource.allCases, values.indices)
    func roundTrip(source: TestKeySource, index: Int) throws {
        let (_, bytes) = Self.values[index]
        let backend = try makeFileBackend(source.source)
        let key = ItemKey(kind: .session, account: "zoë@例え.jp", name: "access")
        let created = Date(timeIntervalSinceReferenceDate: 765_432_109.123_456)
        let item = StoredItem(value: SecretBytes(bytes), created: created, expires: created + 3600.5)
        try backend.write(item, for: key)
        #expect(try backend.read(key) == item)
        let reopened = EncryptedFileBackend(appID: testAppID, directory: backend.directory, keySource: source.source)
        let read = try #require(try reopened.read(key))
        #expect(read.value.copyBytes() == bytes)
        #expect(read.created == created)
        #expect(read.expires == created + 3600.5)
        #expect(try reopened.read(ItemKey(kind: .session, account: "zoë@例え.jp", name: "refresh")) == nil)
    }

    @Test("files are private: directory 0700, vault, key and lock 0600")
    func filesArePrivate() throws {
        let backend = try makeFileBackend()
        try backend.write(StoredItem(value: SecretBytes(utf8: "v")), for: ItemKey(kind: .setting, name: "a"))
        #expect(try POSIX.status(of: backend.directory)?.permissions == 0o700)
        for path in [backend.vaultPath, backend.keyFilePath, backend.lockPath] {
            #expect(try POSIX.status(of: path)?.permissions == 0o600, "\(path)")
        }
        #expect(try fileBytes(backend.keyFilePath).count == 32)
    }

    @Test("a key file is created whole, once, and never replaced")
    func keyFileCreatedOnce() throws {
        let directory = try freshDirectory()
        let path = directory + "/app.key"
        let first = SecretBytes.random(count: 32)
        #expect(try PrivateFiles.createIfAbsent(path, with: first))
        #expect(try PrivateFiles.createIfAbsent(path, with: SecretBytes.random(count: 32)) == false)
        #expect(try KeyFile.read(path) == first)
        #expect(try KeyFile.readOrCreate(path) == first)
        #expect(try POSIX.directoryEntries(directory) == ["app.key"])
    }

    @Test("an overwrite replaces the whole item")
    func overwriteReplaces() throws {
        let backend = try makeFileBackend()
        let key = ItemKey(kind: .session, account: "alice", name: "access")
        try backend.write(StoredItem(value: SecretBytes(utf8: "first"), expires: Date() + 60), for: key)
        let second = StoredItem(value: SecretBytes(utf8: "second"))
        try backend.write(second, for: key)
        #expect(try backend.read(key) == second)
        #expect(try backend.read(key)?.expires == nil)
        #expect(try backend.list(kind: nil) == [key])
    }

    @Test("delete removes one item; deleting an absent item succeeds without a save")
    func deleteRemoves() throws {
        let backend = try makeFileBackend()
        let kept = ItemKey(kind: .username, name: "last")
        let removed = ItemKey(kind: .session, account: "alice", name: "access")
        try backend.write(StoredItem(value: SecretBytes(utf8: "alice")), for: kept)
        try backend.write(StoredItem(value: SecretBytes(utf8: "token")), for: removed)
        try backend.delete(removed)
        #expect(try backend.read(removed) == nil)
        #expect(try backend.read(kept)?.value == SecretBytes(utf8: "alice"))
        let before = try fileBytes(backend.vaultPath)
        try backend.delete(removed)
        #expect(try fileBytes(backend.vaultPath) == before)
    }

    @Test("with no vault, reads are nil, lists empty, and nothing is created")
    func absentVault() throws {
        let backend = try makeFileBackend(fastPassphrase())
        #expect(try backend.read(ItemKey(kind: .username, name: "last")) == nil)
        #expect(try backend.list(kind: nil).isEmpty)
        try backend.delete(ItemKey(kind: .username, name: "last"))
        try backend.deleteAll()
        #expect(try POSIX.status(of: backend.vaultPath) == nil)
        #expect(try backend.vaultKDFParameters() == nil)
    }

    @Test("list filters by kind")
    func listFilters() throws {
        let backend = try makeFileBackend()
        let keys = [
            ItemKey(kind: .username, name: "last"),
            ItemKey(kind: .session, account: "alice", name: "access"),
            ItemKey(kind: .session, account: "bob", name: "access"),
            ItemKey(kind: .setting, name: "remember"),
        ]
        try backend.write(
            contentsOf: Dictionary(uniqueKeysWithValues: keys.map { ($0, StoredItem(value: SecretBytes(utf8: "x"))) }))
        #expect(Set(try backend.list(kind: nil)) == Set(keys))
        #expect(Set(try backend.list(kind: .session)) == Set(keys[1...2]))
        #expect(try backend.list(kind: .username) == [keys[0]])
        #expect(try backend.list(kind: ItemKey.Kind(rawValue: "unused")).isEmpty)
    }

    @Test("deleteAll removes the vault, the key file and the lock file; a new vault gets a new key")
    func deleteAllRemovesFiles() throws {
        let backend = try makeFileBackend()
        let key = ItemKey(kind: .username, name: "last")
        try backend.write(StoredItem(value: SecretBytes(utf8: "alice")), for: key)
        let oldKey = try fileBytes(backend.keyFilePath)
        try backend.deleteAll()
        for path in [backend.vaultPath, backend.keyFilePath, backend.lockPath] {
            #expect(try POSIX.status(of: path) == nil, "\(path)")
        }
        #expect(try POSIX.directoryEntries(backend.directory).isEmpty)
        #expect(try backend.read(key) == nil)
        try backend.write(StoredItem(value: SecretBytes(utf8: "bob")), for: key)
        #expect(try fileBytes(backend.keyFilePath) != oldKey)
        #expect(try backend.read(key)?.value == SecretBytes(utf8: "bob"))
    }

    @Test("two instances in one process see each other's writes")
    func instancesStayCoherent() throws {
        let first = try makeFileBackend(fastPassphrase())
        let second = EncryptedFileBackend(appID: testAppID, directory: first.directory, keySource: fastPassphrase())
        let key = ItemKey(kind: .setting, name: "shared")
        try first.write(StoredItem(value: SecretBytes(utf8: "1")), for: key)
        #expect(try second.read(key)?.value == SecretBytes(utf8: "1"))
        try second.write(StoredItem(value: SecretBytes(utf8: "2")), for: key)
        #expect(try first.read(key)?.value == SecretBytes(utf8: "2"))
        try first.write(StoredItem(value: SecretBytes(utf8: "3")), for: ItemKey(kind: .setting, name: "other"))
        #expect(try second.list(kind: .setting).count == 2)
        #expect(try first.read(key)?.value == SecretBytes(utf8: "2"))
    }

    @Test("status: the vault path, the key source kind and the stored KDF parameters")
    func statusFacts() throws {
        let passphrase = try makeFileBackend(fastPassphrase())
        #expect(passphrase.keySourceKind == .passphrase)
        #expect(passphrase.vaultPath == passphrase.directory + "/com.example.notes.d/credentials.vault")
        try passphrase.write(StoredItem(value: SecretBytes(utf8: "v")), for: ItemKey(kind: .setting, name: "a"))
        #expect(try passphrase.vaultKDFParameters() == fastKDF)
        let keyFile = try makeFileBackend(.keyFile)
        try keyFile.write(StoredItem(value: SecretBytes(utf8: "v")), for: ItemKey(kind: .setting, name: "a"))
        #expect(keyFile.keySourceKind == .keyFile)
        #expect(try keyFile.vaultKDFParameters() == nil)
    }

    @Test("calibration stays within the bounds a reader accepts")
    func calibrationWithinBounds() throws {
        let parameters = try KDFParameters.calibrated(target: .milliseconds(30), memoryLimit: 1 << 20)
        #expect(parameters.memoryLimit <= KDFParameters.maximumMemory && parameters.memoryLimit >= 1 << 20)
        #expect((KDFParameters.minimumOps...KDFParameters.maximumOps).contains(parameters.opsLimit))
        let backend = try makeFileBackend(.passphrase(SecretBytes(utf8: "p"), newVault: .fixed(parameters)))
        try backend.write(StoredItem(value: SecretBytes(utf8: "v")), for: ItemKey(kind: .setting, name: "a"))
        #expect(try backend.vaultKDFParameters() == parameters)
    }

    @Test(
        "parameters outside libsodium's minimums or the reader's caps are refused",
        arguments: [
            (UInt64(0), 8192), (UInt64(1), 4096), (KDFParameters.maximumOps + 1, 8192), (UInt64(1), (1 << 30) + 1),
        ] as [(UInt64, Int)])
    func parameterBounds(ops: UInt64, memory: Int) {
        #expect(errorCode { _ = try KDFParameters(opsLimit: ops, memoryLimit: memory) } == .invalidInput)
    }

    @Test("an item kind the format cannot hold is refused")
    func kindTooLong() throws {
        let backend = try makeFileBackend()
        let key = ItemKey(kind: ItemKey.Kind(rawValue: String(repeating: "k", count: 256)), name: "n")
        #expect(errorCode { try backend.write(StoredItem(value: SecretBytes()), for: key) } == .invalidInput)
    }
}
