import Foundation
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

@testable import Latchkey

/// Grants at the edges (issue 34): tokens outside RFC 6749's VSCHAR, and refreshes that
/// are cancelled or whose save fails.
@Suite("Grants at the edges", .sandboxed)
struct GrantEdgeTests {
    /// Tokens holding a character outside VSCHAR (%x20-7E): a newline, a NUL, a terminal escape, DEL, UTF-8.
    static let unprintable = ["a\nb", "a\u{0}b", "a\u{1B}[31mb", "a\u{7F}", "a\u{E9}", "a\rX-Injected: 1"]

    @Test("a token response whose access or refresh token holds a character outside VSCHAR is refused (65)")
    func responseRefused() throws {
        for token in Self.unprintable {
            let escaped = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
            for body in [
                #"{"access_token":\#(escaped),"token_type":"Bearer"}"#,
                #"{"access_token":"ok","token_type":"Bearer","refresh_token":\#(escaped)}"#,
            ] {
                #expect(throws: LatchkeyError(.invalidInput, "")) { try Grant(tokenResponse: SecretBytes(utf8: body)) }
                do {
                    _ = try Grant(tokenResponse: SecretBytes(utf8: body))
                } catch let error as LatchkeyError {
                    #expect(error.message.contains("VSCHAR") && !error.message.contains(token), "\(error.message)")
                }
            }
        }
        let space = try Grant(tokenResponse: SecretBytes(utf8: #"{"access_token":"a b~","token_type":"Bearer"}"#))
        #expect(space.accessToken == SecretBytes(utf8: "a b~"), "every VSCHAR is kept")
    }

    @Test(
        "a refresher's grant with a token outside VSCHAR is refused (65), never stored or returned",
        arguments: TestedStore.allCases)
    func refreshedGrantRefused(store: TestedStore) throws {
        let vault = try store.withExpiredGrant()
        for (index, token) in Self.unprintable.enumerated() {
            let bad = SecretBytes(utf8: token)
            let grants = [
                Grant(accessToken: bad, accessTokenExpires: Date().addingTimeInterval(3600)),
                Grant(
                    accessToken: SecretBytes(utf8: "a\(index)"), accessTokenExpires: Date().addingTimeInterval(3600),
                    refreshToken: bad),
            ]
            for grant in grants {
                #expect(throws: LatchkeyError(.invalidInput, "")) {
                    try vault.accessToken(named: "s", account: "alice") { _ in .refreshed(grant) }
                }
                #expect(throws: LatchkeyError(.invalidInput, "")) {
                    try vault.saveGrant(grant, name: "other", account: "alice")
                }
                #expect(try vault.grant(named: "other", account: "alice") == nil)
            }
        }
        let kept = try #require(try store.reopen(vault).grant(named: "s", account: "alice"))
        #expect(kept.refreshToken == SecretBytes(utf8: "r0") && kept.accessToken == SecretBytes(utf8: "a0"))
    }

    @Test(
        "an async caller cancelled during its refresh: the refresh finishes and its grant is saved",
        arguments: TestedStore.allCases)
    func cancelledCaller(store: TestedStore) async throws {
        let vault = try store.withExpiredGrant()
        let started = AsyncStream<Void>.makeStream()
        let release = Mutex(false)
        let sawCancellation = Mutex(false)
        let caller = Task {
            try await vault.accessToken(named: "s", account: "alice") { token in
                started.continuation.yield()
                while !release.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
                sawCancellation.withLock { $0 = Task.isCancelled }
                return .refreshed(
                    Grant(
                        accessToken: SecretBytes(utf8: "a1"), accessTokenExpires: Date().addingTimeInterval(3600),
                        refreshToken: SecretBytes(utf8: "r1"), refreshTokenExpires: Date().addingTimeInterval(86_400)))
            }
        }
        for await _ in started.stream { break }
        caller.cancel()
        release.withLock { $0 = true }
        let token = try await caller.value
        #expect(token == SecretBytes(utf8: "a1") && !sawCancellation.withLock { $0 })
        let saved = try #require(try await store.reopen(vault).grant(named: "s", account: "alice"))
        #expect(saved.refreshToken == SecretBytes(utf8: "r1"), "the rotated grant was saved")
    }
}
