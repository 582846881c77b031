import Dispatch
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// Logout and wipe are one change on the encrypted file, and the user's opt-out
/// survives any crash and any interleaving (issue 14, items 1 and 2).
@Suite("Atomic logout and wipe on the encrypted file", .sandboxed)
struct AtomicWipeTests {
    /// Opens the key-file vault of `appID` in `directory` as a separate process would.
    static func open(_ appID: AppID, _ directory: String) throws -> Vault {
        try Vault.withoutSecretService(appID: appID, policy: .default, storeDirectory: directory, backend: .file)
    }

    /// The generation of the vault file, which every save raises by one.
    static func generation(_ vault: Vault) throws -> UInt64 {
        let path = try #require(vault.fileVault?.vaultPath)
        return try VaultHeader.decode(fileBytes(path), path: path).generation
    }

    @Test("a logout of 30 sessions rewrites the vault once: a kill leaves all of them or none")
    func logoutIsOneRewrite() throws {
        let vault = try Self.open(try AppID("com.example.atomic"), try freshDirectory() + "/store")
        for index in 0..<30 {
            try vault.saveSession(SecretBytes(utf8: "t\(index)"), name: "s\(index)", account: "alice")
        }
        try vault.saveSession(SecretBytes(utf8: "other"), name: "s", account: "bob")
        let before = try Self.generation(vault)
        let report = try vault.logout(account: "alice")
        #expect(report.wipedSessions.count == 30)
        #expect(try Self.generation(vault) == before + 1, "one atomic rewrite, not one per session")
        #expect(try vault.sessions().map(\.account) == ["bob"])
    }

    @Test("a wipe keeps the opt-out in the same rewrite that destroys the key")
    func wipeKeepsOptOut() throws {
        let vault = try Self.open(try AppID("com.example.wipe"), try freshDirectory() + "/store")
        try vault.setUsernameMemoryAllowed(false)
        try vault.saveSession(SecretBytes(utf8: "t"), name: "s", account: "alice")
        let file = try #require(vault.fileVault)
        let oldKey = try fileBytes(file.keyFilePath)
        try vault.wipe()
        #expect(try fileBytes(file.keyFilePath) != oldKey, "the key is destroyed")
        #expect(try POSIX.status(of: file.keyFilePath + ".next") == nil)
        #expect(try !vault.isUsernameMemoryAllowed())
        #expect(try Self.open(vault.appID, vault.storeDirectory!).isUsernameMemoryAllowed() == false)
        #expect(try vault.sessions().isEmpty)
    }

    @Test("two processes wiping at once never turn username memory back on")
    func concurrentWipes() throws {
        let directory = try freshDirectory() + "/store"
        let appID = try AppID("com.example.race")
        try Self.open(appID, directory).setUsernameMemoryAllowed(false)
        let vaults = try (0..<2).map { _ in try Self.open(appID, directory) }
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for round in 0..<15 {
                _ = try? vaults[index].saveSession(SecretBytes(utf8: "t"), name: "s\(round)", account: "a")
                _ = try? vaults[index].wipe()
            }
        }
        #expect(try Self.open(appID, directory).isUsernameMemoryAllowed() == false)
    }

    @Test("a crash between saving the vault under the new key and renaming the key is finished by the next reader")
    func interruptedRotationRecovers() throws {
        let directory = try freshDirectory() + "/store"
        let backend = EncryptedFileBackend(
            appID: try AppID("com.example.rotate"), directory: directory, keySource: .keyFile)
        let setting = ItemKey(kind: .setting, name: "rememberUsername")
        try backend.write(StoredItem(value: SecretBytes(utf8: "off")), for: setting)
        // The state a crash leaves after step 3 of a rotation: the vault sealed under the next key, the old key file in place.
        let next = SecretBytes.random(count: KeyFile.length)
        try PrivateFiles.replaceSecret(backend.keyFilePath + ".next", with: next)
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltLength)
        let keys = VaultKeys(master: next, salt: salt)
        let header = VaultHeader(
            source: .keyFile, kdf: nil, salt: salt, generation: 1, keyCheck: keys.check, appID: "com.example.rotate")
        try PrivateFiles.replace(
            backend.vaultPath,
            with: try VaultFormat.seal(
                [setting: StoredItem(value: SecretBytes(utf8: "off"))], header: header, keys: keys, path: ""))

        let fresh = EncryptedFileBackend(appID: backend.appID, directory: directory, keySource: .keyFile)
        #expect(try fresh.read(setting)?.value == SecretBytes(utf8: "off"))
        #expect(try POSIX.status(of: backend.keyFilePath + ".next") == nil)
        #expect(try KeyFile.read(backend.keyFilePath) == next)
    }
}
