import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite("VaultSettings: an app's policy, backend and store resolved as the command line resolves them", .sandboxed)
struct VaultSettingsTests {
    /// A user's policy file, `$XDG_CONFIG_HOME/latchkey/policy.json`, holding the shipped strict policy renamed.
    static func userConfig() throws -> (config: String, file: String) {
        let config = try freshDirectory() + "/config"
        try FileManager.default.createDirectory(
            atPath: config + "/latchkey", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../policy/strict.json")
        let text = try String(contentsOf: shipped, encoding: .utf8).replacingOccurrences(
            of: "\"name\": \"strict\"", with: "\"name\": \"users-own\"")
        let file = config + "/latchkey/policy.json"
        _ = FileManager.default.createFile(
            atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        return (config, file)
    }

    @Test("the policy: what the app gives, else LATCHKEY_POLICY, else the user's file, else the app's default")
    func policyPrecedence() throws {
        let (config, file) = try Self.userConfig()
        var environment = ["HOME": "/home/nobody", "XDG_CONFIG_HOME": config, "LATCHKEY_POLICY": "built-in:strict"]
        let given = try VaultSettings(
            policy: "built-in:shared-device", defaultPolicy: .default, environment: environment)
        #expect(given.policy.name == "shared-device" && given.policyOrigin == .given)
        let variable = try VaultSettings(defaultPolicy: .sharedDevice, environment: environment)
        #expect(variable.policy.name == "strict" && variable.policyOrigin == .environment("LATCHKEY_POLICY"))
        environment["LATCHKEY_POLICY"] = ""
        let user = try VaultSettings(defaultPolicy: .sharedDevice, environment: environment)
        #expect(user.policy.name == "users-own" && user.policyOrigin == .userFile(file))
        environment["XDG_CONFIG_HOME"] = try freshDirectory() + "/empty-config"
        let fallback = try VaultSettings(defaultPolicy: .sharedDevice, environment: environment)
        #expect(fallback.policy.name == "shared-device" && fallback.policyOrigin == .fallback)
    }

    @Test("a named policy that is missing or unknown is an error naming where it was named")
    func policyErrors() throws {
        let environment = ["HOME": "/home/nobody", "LATCHKEY_POLICY": "/nonexistent/policy.json"]
        let missing = #expect(throws: LatchkeyError.self) { try VaultSettings(environment: environment) }
        #expect(missing?.code == .notFound && missing?.message.hasPrefix("LATCHKEY_POLICY: ") == true)
        let unknown = #expect(throws: LatchkeyError.self) {
            try VaultSettings(policy: "built-in:strictest", environment: environment)
        }
        #expect(unknown?.code == .invalidInput && unknown?.message.contains("'strictest'") == true)
    }

    @Test(
        "the backend choice: given, else LATCHKEY_BACKEND, else the policy's; the store: given, else LATCHKEY_HOME, else XDG"
    )
    func backendAndStore() throws {
        var environment = ["HOME": "/home/nobody", "LATCHKEY_BACKEND": "file", "LATCHKEY_HOME": "/srv/latchkey"]
        let fromEnvironment = try VaultSettings(environment: environment)
        #expect(fromEnvironment.backend == .file && fromEnvironment.backendOrigin == .environment("LATCHKEY_BACKEND"))
        #expect(fromEnvironment.storeDirectory == "/srv/latchkey")
        #expect(fromEnvironment.storeDirectoryOrigin == .environment("LATCHKEY_HOME"))
        let given = try VaultSettings(backend: .auto, storeDirectory: "/opt/store", environment: environment)
        #expect(given.backend == .auto && given.backendOrigin == .given)
        #expect(given.storeDirectory == "/opt/store" && given.storeDirectoryOrigin == .given)
        environment = ["HOME": "/home/nobody", "LATCHKEY_BACKEND": "", "LATCHKEY_HOME": ""]
        let fallback = try VaultSettings(environment: environment)
        #expect(fallback.backend == nil && fallback.backendOrigin == .fallback)
        #expect(
            fallback.storeDirectory == "/home/nobody/.local/share/latchkey"
                && fallback.storeDirectoryOrigin == .fallback)
        #expect(throws: LatchkeyError(.invalidInput, "")) {
            try VaultSettings(environment: ["HOME": "/home/nobody", "LATCHKEY_BACKEND": "keyring"])
        }
        #expect(throws: LatchkeyError(.invalidInput, "")) {
            try VaultSettings(environment: ["HOME": "/home/nobody", "LATCHKEY_HOME": "relative/store"])
        }
        #expect(throws: LatchkeyError(.invalidInput, "")) {
            try VaultSettings(storeDirectory: "relative/store", environment: ["HOME": "/home/nobody"])
        }
    }
}
