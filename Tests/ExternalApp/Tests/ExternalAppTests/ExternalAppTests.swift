import CProbe
import Foundation
import Latchkey
import LatchkeyTesting
import Testing

/// A fresh private directory under TMPDIR, removed by the caller.
func privateDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "external-app-\(UUID().uuidString)"
    try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}

/// A policy whose encrypted file is protected by a passphrase, with a cheap KDF for the test.
let passphrasePolicy = try! Policy(
    jsonData: Array(
        #"{"version": 1, "name": "external", "backend": {"kind": "file"}, "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8}}}"#
            .utf8), source: "external-app")

// Serialized: the dumpable flag and the working directory belong to the whole process.
@Suite("An app that depends on Latchkey", .serialized)
struct ExternalAppTests {
    let appID = try! AppID("com.example.external")

    @Test("a wrong passphrase fails at open, and localizedDescription is the message")
    func wrongPassphrase() throws {
        let directory = try privateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try Vault.open(
            appID: appID, policy: passphrasePolicy, storeDirectory: directory, passphrase: SecretBytes(utf8: "right"))
        try vault.saveSession(SecretBytes(utf8: "t0ken"), name: "access", account: "alice")
        let refused = #expect(throws: LatchkeyError.self) {
            try Vault.open(
                appID: appID, policy: passphrasePolicy, storeDirectory: directory,
                passphrase: SecretBytes(utf8: "wrong"))
        }
        #expect(refused?.code == .wrongKey)
        let error: any Error = try #require(refused)
        #expect(error.localizedDescription == refused?.message)
        #expect(!error.localizedDescription.contains("operation could not be completed"))
    }

    @Test("the process stays dumpable while a secret lives, until the app opts in")
    func dumpable() throws {
        #expect(probe_dumpable() == 1)
        let secret = SecretBytes(utf8: "api-key")
        let vault = Vault.makeInMemory(appID: appID)
        try vault.saveSession(secret, name: "access", account: "alice")
        _ = try vault.session(named: "access", account: "alice")
        #expect(probe_dumpable() == 1, "the library changed the process's dumpable flag on its own")
        MemoryProtection.forbidDumpsWhileHoldingSecrets()
        let held = SecretBytes(utf8: "held")
        #expect(probe_dumpable() == 0, "the app opted in")
        _ = held
    }

    @Test("a library message names the Vault call that repairs a broken trail, never a command line")
    func messagesNameNoCommand() throws {
        let directory = try privateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try Vault.open(appID: appID, storeDirectory: directory, backend: .file)
        try vault.saveSession(SecretBytes(utf8: "t0ken"), name: "access", account: "alice")
        let namespace = directory + "/\(appID).d"
        for name in try FileManager.default.contentsOfDirectory(atPath: namespace) where name.contains("anchor") {
            try FileManager.default.removeItem(atPath: namespace + "/" + name)
        }
        let reopened = try Vault.open(appID: appID, storeDirectory: directory, backend: .file)
        let broken = #expect(throws: LatchkeyError.self) {
            try reopened.saveSession(SecretBytes(utf8: "t1ken"), name: "access", account: "alice")
        }
        #expect(broken?.code == .tampered)
        #expect(broken?.message.contains("Vault.resetAuditTrail()") == true)
        #expect(broken?.message.contains("latchkey ") == false, "\(broken?.message ?? "")")
    }

    @Test("the in-memory test vault works from a read-only working directory and writes no file")
    func readOnlyWorkingDirectory() throws {
        let directory = try privateDirectory()
        defer {
            chmod(directory, 0o700)
            try? FileManager.default.removeItem(atPath: directory)
        }
        let home = NSHomeDirectory()
        let before = try? FileManager.default.subpathsOfDirectory(atPath: home)
        let previous = FileManager.default.currentDirectoryPath
        #expect(chmod(directory, 0o500) == 0 && chdir(directory) == 0)
        defer { _ = chdir(previous) }
        let vault = Vault.makeInMemory(appID: appID)
        #expect(vault.storeDirectory == nil)
        try vault.rememberUsername("alice")
        try vault.saveSession(SecretBytes(utf8: "t0ken"), name: "access", account: "alice")
        try vault.logout(account: "alice")
        #expect(try vault.verifyAudit().allSatisfy { $0.verification.isIntact })
        #expect(try vault.auditEntries().count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect((try? FileManager.default.subpathsOfDirectory(atPath: home)) == before, "nothing written in HOME")
    }

    @Test("a session expires under the injected clock, without sleeping")
    func expiryUnderClock() throws {
        let clock = TestClock()
        let vault = Vault.makeInMemory(appID: appID, clock: clock)
        try vault.saveSession(
            SecretBytes(utf8: "t0ken"), name: "access", account: "alice", expires: clock.now.addingTimeInterval(60))
        clock.advance(by: 59)
        #expect(try vault.session(named: "access", account: "alice") != nil)
        clock.advance(by: 1)
        #expect(try vault.session(named: "access", account: "alice") == nil)
        #expect(try vault.auditEntries().last?.event == .sessionExpired)
    }

    @Test("a named secret outlives the session cap and is wiped as its policy says")
    func namedSecret() throws {
        let clock = TestClock()
        let keeping = try Policy(name: "keeping", sessionMaxAge: 3600)
        let vault = Vault.makeInMemory(appID: appID, policy: keeping, clock: clock)
        try vault.saveSecret(SecretBytes(utf8: "sk-live"), named: "api-key")
        try vault.saveSession(SecretBytes(utf8: "t0ken"), name: "access", account: "alice")
        clock.advance(by: 2 * 3600)
        #expect(try vault.session(named: "access", account: "alice") == nil)
        #expect(try vault.secret(named: "api-key")?.value == SecretBytes(utf8: "sk-live"))
        #expect(try vault.logout(account: "alice").keptSecrets == 1)
        #expect(try vault.secrets().map(\.name) == ["api-key"])

        let wiping = Vault.makeInMemory(appID: appID, policy: try Policy(name: "wiping", secretsOnLogout: .wipe))
        try wiping.saveSecret(SecretBytes(utf8: "sk-live"), named: "api-key")
        #expect(try wiping.logout(account: "alice").wipedSecrets.map(\.name) == ["api-key"])
        #expect(try wiping.secret(named: "api-key") == nil)
    }
}
