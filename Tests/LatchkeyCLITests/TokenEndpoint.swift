import Foundation
import LatchkeyTestSupport

/// The test token endpoint, `scripts/token-endpoint.py`, on 127.0.0.1: refresh tokens
/// rotate on every use, and a reused one revokes the family (docs/ROTATION.md). It is the
/// test's process, ended with its sandbox.
final class TokenEndpoint: Sendable {
    let port: Int

    /// Starts an endpoint whose family begins with refresh token `r0`.
    /// - Parameters:
    ///   - delayMilliseconds: How long each refresh takes to answer.
    ///   - expiresIn: The `expires_in` of the access tokens it issues.
    init(delayMilliseconds: Int = 0, expiresIn: Int = 3600, label: String = #function) throws {
        let portFile = try freshDirectory(label) + "/port"
        _ = try Child(
            try GeneratedFiles.which("python3"),
            [
                GeneratedFiles.repository + "/scripts/token-endpoint.py", "--port-file", portFile, "--delay-ms",
                String(delayMilliseconds), "--expires-in", String(expiresIn),
            ])
        let giveUp = Date().addingTimeInterval(20)
        while Date() < giveUp {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) {
                self.port = port
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestSupportError("the token endpoint did not start within 20 s")
    }

    /// The refresh command the issue gives, with `curl`, against this endpoint (or a closed `port`).
    func refreshCommand(port: Int? = nil) -> String {
        "curl -s -X POST --data-urlencode grant_type=refresh_token --data-urlencode refresh_token@- "
            + "http://127.0.0.1:\(port ?? self.port)/token"
    }

    /// What the endpoint counted: `refreshes`, `reuse`, `revoked`, and the current `access_token` and `refresh_token`.
    func stats() throws -> [String: Any] {
        let run = try GeneratedFiles.run("curl", ["-s", "http://127.0.0.1:\(port)/stats"])
        guard let stats = try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any] else {
            throw TestSupportError("the token endpoint's stats are not a JSON object: \(run.text)")
        }
        return stats
    }

    /// Changes how it answers: `{"down": true}`, `{"revoke": true}`, `{"delay_ms": 200}`.
    func control(_ change: String) throws {
        let run = try GeneratedFiles.run(
            "curl", ["-s", "-X", "POST", "--data-binary", change, "http://127.0.0.1:\(port)/control"])
        guard run.status == 0 else { throw TestSupportError("control \(change) failed: \(run.stderr)") }
    }

    /// A token response holding refresh token `refresh` and an access token that has already expired.
    static func expiredResponse(refresh: String, access: String = "stale") -> String {
        #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":0,"refresh_token":"\#(refresh)","scope":"read"}"#
    }
}
