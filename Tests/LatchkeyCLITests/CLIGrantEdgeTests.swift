import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// `session put --grant` and `session get --refresh-command` at the edges (issue 34):
/// tokens outside VSCHAR, a refresh command that outlives its deadline, signals during a refresh.
@Suite("latchkey session grants at the edges", .sandboxed)
struct CLIGrantEdgeTests {
    /// Token values a header must never receive, as JSON string literals.
    static let unprintable = [#""a\nb""#, #""a\u0000b""#, #""a\u001b[31mb""#, #""a\r\nX-Injected: 1""#, #""a\u00e9""#]

    @Test(
        "a token outside VSCHAR from the refresh command or on put --grant exits 65, is never stored or printed",
        arguments: backends)
    func unprintableTokens(backend: String) throws {
        let store = try Store(backend)
        try store.run(["session", "put", "s", "--grant"], input: TokenEndpoint.expiredResponse(refresh: "r0"))
        for literal in Self.unprintable {
            for body in [
                #"{"access_token":\#(literal),"token_type":"Bearer","expires_in":3600,"refresh_token":"r1"}"#,
                #"{"access_token":"fine","token_type":"Bearer","expires_in":3600,"refresh_token":\#(literal)}"#,
            ] {
                let put = try store.run(["session", "put", "t", "--grant"], input: body)
                #expect(put.status == 65 && put.stderr.contains("VSCHAR"), "\(literal): \(put.stderr)")
                let file = try freshDirectory("body") + "/answer.json"
                try body.write(toFile: file, atomically: true, encoding: .utf8)
                let get = try store.run(["session", "get", "s", "--refresh-command", "cat >/dev/null; cat '\(file)'"])
                #expect(get.status == 65 && get.stderr.contains("VSCHAR"), "\(literal): \(get.stderr)")
                #expect(get.stdout.isEmpty && !get.stderr.contains("fine") && !get.stderr.contains("a\u{1B}"))
            }
        }
        let listed = try store.json(["session", "list"])["sessions"] as? [[String: Any]]
        #expect(listed?.map { $0["name"] as? String } == ["s"], "nothing else was stored")
        let vault = try Vault.open(
            appID: try AppID(store.app), storeDirectory: store.storeDirectory,
            backend: backend == "file" ? .file : .secretService)
        let kept = try #require(try vault.grant(named: "s", account: ""))
        #expect(kept.refreshToken?.utf8String() == "r0" && kept.accessToken.utf8String() == "stale")
    }
}
