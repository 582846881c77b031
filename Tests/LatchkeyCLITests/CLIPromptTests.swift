import Foundation
import LatchkeyTestSupport
import Testing

/// Runs `latchkey` on a pseudo-terminal (util-linux `script`), typing `typed`
/// once the program has shown `prompt` (latchkey switches echo off before it
/// shows a secret's prompt), and returns the transcript.
private func onTerminal(_ store: Store, _ arguments: [String], after prompt: String, typing typed: String) throws -> (
    status: Int32, transcript: String
) {
    let command = try ([latchkeyPath()] + store.options + arguments).map { "'\($0)'" }.joined(separator: " ")
    let script = Process()
    script.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    script.arguments = ["-qec", command, "/dev/null"]
    // An agent the command starts is the test's, in its runtime directory (ended with the test).
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = try TestSandbox.required(for: "onTerminal").runtimeDirectory()
    script.environment = environment
    let input = Pipe()
    let output = Pipe()
    script.standardInput = input
    script.standardOutput = output
    script.standardError = output
    try script.run()
    var transcript = Data()
    // A watchdog ends the terminal session if the program never asks or never ends.
    let watchdog = DispatchWorkItem { script.terminate() }
    DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
    defer { watchdog.cancel() }
    while !String(decoding: transcript, as: UTF8.self).contains(prompt) {
        let chunk = output.fileHandleForReading.availableData
        guard !chunk.isEmpty else {
            throw TestSupportError("no prompt '\(prompt)': \(String(decoding: transcript, as: UTF8.self))")
        }
        transcript += chunk
    }
    try input.fileHandleForWriting.write(contentsOf: Data(typed.utf8))
    transcript += output.fileHandleForReading.readDataToEndOfFile()
    script.waitUntilExit()
    try input.fileHandleForWriting.close()
    return (script.terminationStatus, String(decoding: transcript, as: UTF8.self))
}

@Suite("latchkey prompts on a terminal", .sandboxed)
struct CLIPromptTests {
    @Test("a token typed at the prompt is not echoed, and is stored")
    func tokenPrompt() throws {
        let store = try Store("file")
        let token = "typed-canary-\(UUID().uuidString.prefix(8))"
        let (status, transcript) = try onTerminal(
            store, ["session", "put", "access"], after: "Token for session access", typing: token + "\n")
        #expect(status == 0, "\(transcript)")
        #expect(!transcript.contains(token), "the token was echoed: \(transcript)")
        #expect(try store.run(["session", "get", "access"]).text == token + "\n")
    }

    @Test("a passphrase typed at the prompt is not echoed, and opens the vault")
    func passphrasePrompt() throws {
        let store = try Store("file")
        let policy = store.directory + "/policy.json"
        let document = """
            {"version": 1, "name": "typed", "username": {"remember": true},
             "sessions": {"maxAgeSeconds": 3600, "wipeOnExit": false},
             "onLogout": {"sessions": "wipe", "username": "keep"},
             "backend": {"kind": "file"},
             "file": {"keySource": "passphrase", "kdf": {"targetUnlockMilliseconds": 50, "minimumMemoryKiB": 8192}},
             "audit": {"enabled": true, "onFailure": "fail"}, "agent": {"unlockCacheSeconds": 0}}
            """
        try document.write(toFile: policy, atomically: true, encoding: .utf8)
        #expect(try latchkey(["policy", "check", policy]).status == 0)
        let passphrase = "typed-passphrase-\(UUID().uuidString.prefix(8))"
        let saved = try latchkey(["--policy", policy] + store.options + ["session", "put", "access"], input: "t\n")
        #expect(saved.status == 77 && saved.stderr.contains("passphrase"), "no passphrase source: \(saved.stderr)")
        let (status, transcript) = try onTerminal(
            store, ["--policy", policy, "username", "set", "alice"], after: "Passphrase for", typing: passphrase + "\n")
        #expect(status == 0, "\(transcript)")
        #expect(!transcript.contains(passphrase), "the passphrase was echoed: \(transcript)")
        let (opened, reopened) = try onTerminal(
            store, ["--policy", policy, "username", "get"], after: "Passphrase for", typing: passphrase + "\n")
        #expect(opened == 0 && reopened.contains("alice"), "\(reopened)")
    }

    @Test("wipe asks for confirmation on a terminal and does nothing without 'yes'")
    func wipeConfirmation() throws {
        let store = try Store("file")
        try store.run(["session", "put", "access"], input: "t\n")
        let (declined, transcript) = try onTerminal(store, ["wipe"], after: "Type 'yes' to confirm", typing: "no\n")
        #expect(declined == 0 && transcript.contains("Type 'yes' to confirm"), "\(transcript)")
        #expect(try store.run(["session", "get", "access"]).status == 0)
        let (confirmed, _) = try onTerminal(store, ["wipe"], after: "Type 'yes' to confirm", typing: "yes\n")
        #expect(confirmed == 0)
        #expect(try store.run(["session", "get", "access"]).status == 1)
    }
}
