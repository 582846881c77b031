import Latchkey
import LatchkeyCommands

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `demo`: a narrated, non-interactive walk through the main job, on the
/// encrypted file in a throw-away store directory, so the user's real data is
/// never touched. Each step prints one line.
enum DemoCommand {
    static func run(_ context: Context, _ arguments: CommandArguments) throws {
        let directory =
            FileManager.default.temporaryDirectory.path + "/latchkey-demo-"
            + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        var steps: [String] = []
        func step(_ text: String) throws {
            steps.append(text)
            try context.output.line("\(steps.count). \(text)")
        }
        defer {
            // Best effort: the demo's own throw-away directory; a failure leaves it in /tmp.
            try? FileManager.default.removeItem(atPath: directory)
        }
        try step("Opened a throw-away store in \(directory) (your real credentials are not touched).")
        let appID = try AppID("com.example.demo")
        let vault = try Vault.open(appID: appID, policy: .default, storeDirectory: directory + "/store", backend: .file)
        try vault.rememberUsername("alice")
        try step("Remembered the username \"\(try vault.lastUsername() ?? "")\" for the next login screen.")
        let status = try vault.status()
        try step("Status: backend \(status.backend), policy '\(status.policyName)'; protection: \(status.protection).")
        let token = SecretBytes(utf8: "demo-access-token-0123456789")
        let expires = try vault.saveSession(
            token, name: "access", account: "alice", expires: Date().addingTimeInterval(3_600))
        try step("Saved the session token 'access' for alice, expiring \(formatTime(expires)) (in one hour).")
        let readBack = try vault.session(named: "access", account: "alice")
        try step(
            "Read it back: \(readBack?.value == token ? "the same \(token.count) bytes" : "NOT the token that was saved")."
        )
        try vault.setUsernameMemoryAllowed(false)
        try step(
            "Opted out of username memory: the remembered username is now \(try vault.lastUsername().map { "\"\($0)\"" } ?? "gone")."
        )
        try vault.setUsernameMemoryAllowed(true)
        try vault.rememberUsername("alice")
        try vault.saveSession(SecretBytes(utf8: "demo-refresh-token"), name: "refresh", account: "alice")
        try step("Opted back in, remembered alice again, and saved a second token 'refresh'.")
        let report = try vault.logout(account: "alice")
        let left = try vault.sessions(account: "alice").count
        try step(
            "Logged out under policy '\(vault.policy.name)': \(report.summary); \(left) sessions left, username \(try vault.lastUsername().map { "\"\($0)\" kept" } ?? "gone")."
        )
        let entries = try vault.auditEntries()
        try step("The audit trail holds \(entries.count) entries (no secret, accounts as pseudonyms):")
        for entry in entries {
            try context.output.line(
                "     \(entry.sequence) \(entry.timeText) \(entry.event) \(entry.outcome.name)\(entry.detail.map { " \($0)" } ?? "")"
            )
        }
        let verdicts = try vault.verifyAudit()
        let intact = verdicts.allSatisfy { $0.verification.isIntact }
        try step("Verified the audit trail: \(intact ? "intact, every entry authentic and none missing" : "BROKEN").")
        try step("Removing the throw-away store; try `latchkey --help` for the commands.")
        context.output.set("steps", .array(steps.map { .string($0) }))
        context.output.set("auditEntries", .integer(entries.count))
        context.output.set("auditIntact", .bool(intact))
        guard intact else { throw LatchkeyError(.tampered, "the demo's audit trail did not verify") }
    }
}
