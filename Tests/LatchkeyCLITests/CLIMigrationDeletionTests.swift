import Foundation
import LatchkeyTestSupport
import Testing

/// Issue 34 case 1 from the command line (in-process, and through the agent in `make test`'s agent pass):
/// a deletion made without the passphrase while a passphrase vault is being migrated stays done.
@Suite("latchkey: deletions during a migration's window", .sandboxed, .needsSecretService)
struct CLIMigrationDeletionTests {
    @Test(
        "logout, session delete and wipe without the passphrase are not undone by the next command with it",
        arguments: [["logout"], ["session", "delete", "access"], ["wipe", "--yes"]])
    func deletionWithoutPassphrase(command: [String]) throws {
        let file = try Store("file")
        let policy = file.directory + "/passphrase.json"
        try """
        {"version": 1, "name": "passphrase-test",
         "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8}},
         "agent": {"unlockCacheSeconds": 0}}
        """.write(toFile: policy, atomically: true, encoding: .utf8)
        let passphraseFile = file.directory + "/passphrase"
        try "correct horse".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphraseFile)
        let unlocked = ["--policy", policy, "--passphrase-file", passphraseFile]
        let service = ["--backend", "secret-service", "--store-dir", file.storeDirectory, "--app", file.app]

        let put = try file.run(unlocked + ["session", "put", "access"], input: "tok-1")
        #expect(put.status == 0, "\(put.stderr)")
        // The first open on the Secret Service with the passphrase copies it; the file is kept.
        let copied = try latchkey(service + unlocked + ["session", "get", "access"])
        #expect(copied.text == "tok-1\n", "\(copied.stderr)")
        #expect(FileManager.default.fileExists(atPath: file.vaultPath))

        let deletion = try latchkey(service + ["--policy", policy] + command)
        #expect(deletion.status == 0, "\(deletion.stderr)")
        if command[0] != "session" { #expect(deletion.text.contains("wiped 1 session"), "\(deletion.text)") }

        let after = try latchkey(service + unlocked + ["session", "get", "access"])
        #expect(after.text.isEmpty && after.status != 0, "the deleted session came back: \(after.text)")
        let list = try latchkey(service + unlocked + ["session", "list"])
        #expect(list.status == 0 && list.text.isEmpty, "\(list.text)")
    }
}
