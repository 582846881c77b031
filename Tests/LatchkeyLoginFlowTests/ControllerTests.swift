import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@testable import LatchkeyLoginFlow

/// A real `Vault` on the encrypted file (key file) in a fresh directory of the
/// test sandbox, optionally with a remembered username.
func makeVault(username: String? = nil, remembers: Bool = true) throws -> Vault {
    let directory = try freshDirectory()
    let vault = try Vault.open(appID: try AppID("com.example.login"), storeDirectory: directory, backend: .file)
    if let username { try vault.rememberUsername(username) }
    if !remembers { try vault.setUsernameMemoryAllowed(false) }
    return vault
}

/// The driver against a real `Vault`.
@Suite("LoginController", .sandboxed)
struct ControllerTests {
    typealias F = Fixtures

    private func controller(
        _ authenticator: ScriptedAuthenticator, _ store: Vault, _ recorder: OutputRecorder, tick: Duration = .seconds(1)
    ) -> LoginController {
        LoginController(
            authenticator: authenticator, store: store, configuration: F.configuration, tickInterval: tick,
            output: recorder.handler)
    }

    /// A controller whose store takes 300 ms to save, after bob's login was answered (the save may still run).
    private func signedInWhileSaving(_ vault: Vault) async -> LoginController {
        let authenticator = ScriptedAuthenticator([.success(F.tokens)], holds: true)
        let login = LoginController(
            authenticator: authenticator, store: SlowSaveStore(vault: vault, delay: .milliseconds(300)),
            configuration: F.configuration, output: OutputRecorder().handler)
        await login.appear()
        await login.send(.usernameChanged("bob"))
        await login.send(.passwordChanged(F.password))
        await login.send(.submitTapped)
        authenticator.release()
        return login
    }

    private func logIn(_ controller: LoginController, as username: String) async {
        await controller.send(.usernameChanged(username))
        await controller.send(.passwordChanged(F.password))
        await controller.send(.submitTapped)
        await controller.settle()
    }

    @Test("appearing prefills the remembered username from the store and focuses the password")
    func prefill() async throws {
        let recorder = OutputRecorder()
        let login = controller(ScriptedAuthenticator([]), try makeVault(username: "alice"), recorder)
        await login.appear()
        let state = await login.state
        #expect(state.username == "alice" && state.remembersUsername && !state.canSubmit)
        #expect(recorder.focused == [.password])
        #expect(recorder.renders == 1)
    }

    @Test("a successful login saves the session, remembers the username and clears the password")
    func success() async throws {
        let authenticator = ScriptedAuthenticator([.success(F.tokens)])
        let store = try makeVault()
        let login = controller(authenticator, store, OutputRecorder())
        await login.appear()
        await logIn(login, as: "bob")
        let state = await login.state
        #expect(state.signedInAccount == "bob" && state.password.isEmpty && !state.isInFlight)
        #expect(authenticator.attempts.count == 1 && authenticator.attempts.first?.password == F.password)
        #expect(try await store.session(named: "access", account: "bob")?.value == F.tokens.accessToken)
        #expect(try await store.grant(named: "access", account: "bob")?.refreshToken == F.tokens.refreshToken)
        #expect(try await store.sessions().count == 1, "the grant is one item")
        #expect(try await store.lastUsername() == "bob")

        await login.send(.logoutRequested)
        #expect(try await store.sessions().isEmpty)
        #expect(try await store.auditEntries().contains { $0.event == .logout })
    }

    @Test("opting out on the screen forgets the username in the store, and a later login does not remember it")
    func optOut() async throws {
        let store = try makeVault(username: "alice")
        let login = controller(ScriptedAuthenticator([.success(F.tokens)]), store, OutputRecorder())
        await login.appear()
        await login.send(.rememberUsernameChanged(false))
        #expect(try await store.isUsernameMemoryAllowed() == false)
        #expect(try await store.lastUsername() == nil)
        await logIn(login, as: "alice")
        #expect(try await store.lastUsername() == nil)
        #expect(try await store.session(named: "access", account: "alice") != nil)
    }

    @Test("disappearing cancels the request in flight, and its answer changes nothing")
    func cancelOnDisappear() async throws {
        let authenticator = ScriptedAuthenticator([.success(F.tokens)], holds: true)
        let store = try makeVault()
        let login = controller(authenticator, store, OutputRecorder())
        await login.appear()
        await login.send(.usernameChanged("bob"))
        await login.send(.passwordChanged(F.password))
        await login.send(.submitTapped)
        #expect(await login.state.showsProgress)
        await login.send(.disappeared)
        await login.settle()
        let state = await login.state
        #expect(!state.isInFlight && state.signedInAccount == nil && state.message == nil)
        #expect(authenticator.cancelled == 1)
        #expect(try await store.sessions().isEmpty)
    }

    @Test("a held request shows progress until its answer, then the password is kept on a network error")
    func heldRequest() async throws {
        let authenticator = ScriptedAuthenticator([.failure(.networkUnreachable)], holds: true)
        let login = controller(authenticator, try makeVault(), OutputRecorder())
        await login.appear()
        await login.send(.usernameChanged("bob"))
        await login.send(.passwordChanged(F.password))
        await login.send(.submitTapped)
        #expect(await login.state.showsProgress)
        authenticator.release()
        await login.settle()
        let state = await login.state
        #expect(!state.showsProgress && state.fieldsEnabled && state.message == .networkUnreachable)
        #expect(state.password == F.password && state.canSubmit)
    }

    @Test("while rate-limited the controller counts down until submit is possible again")
    func countdown() async throws {
        let authenticator = ScriptedAuthenticator([.failure(.rateLimited(retryAfter: .milliseconds(60)))])
        let login = controller(authenticator, try makeVault(), OutputRecorder(), tick: .milliseconds(10))
        await login.appear()
        await logIn(login, as: "bob")
        let state = await login.state
        #expect(!state.isRateLimited && state.message == nil)
        #expect(state.password == F.password && state.canSubmit)
    }

    @Test("a store failure is reported, and the screen keeps working")
    func storeFailure() async throws {
        let recorder = OutputRecorder()
        let backend = InMemoryBackend()
        backend.fail(with: LatchkeyError(.unavailable, "the test's store is down"))
        let store = try Vault(
            appID: try AppID("com.example.login"), policy: .default, storeDirectory: "/nonexistent", store: backend)
        let login = controller(ScriptedAuthenticator([.success(F.tokens)]), store, recorder)
        await login.appear()
        #expect(await login.state.isVisible)
        #expect(await login.state.remembersUsername == false, "unknown choice: do not remember")
        await logIn(login, as: "bob")
        #expect(recorder.failures == [.load, .saveSession])
        #expect(await login.state.signedInAccount == "bob")
        #expect(await login.state.message == .sessionNotSaved)
    }

    @Test("a session the store could not save comes back into the state, and logout clears the message")
    func sessionNotSaved() async throws {
        let recorder = OutputRecorder()
        let backend = InMemoryBackend()
        let store = try Vault(
            appID: try AppID("com.example.login"), policy: .default, storeDirectory: "/nonexistent", store: backend)
        let login = controller(ScriptedAuthenticator([.success(F.tokens)]), store, recorder)
        await login.appear()
        #expect(recorder.failures.isEmpty)
        backend.fail(with: LatchkeyError(.unavailable, "the keyring went away after the screen appeared"))
        await logIn(login, as: "bob")
        let state = await login.state
        #expect(recorder.failures.first == .saveSession)
        #expect(state.signedInAccount == "bob" && state.message == .sessionNotSaved && state.password.isEmpty)
        #expect(MessageKey.sessionNotSaved.text(in: .german).contains("Sitzung"))
        backend.removeFailures()
        await login.send(.logoutRequested)
        let after = await login.state
        #expect(after.message == nil && after.signedInAccount == nil)
    }

    @Test("a saved session shows no message")
    func sessionSaved() async throws {
        let recorder = OutputRecorder()
        let login = controller(ScriptedAuthenticator([.success(F.tokens)]), try makeVault(), recorder)
        await login.appear()
        await logIn(login, as: "bob")
        #expect(recorder.failures.isEmpty)
        #expect(await login.state.message == nil)
    }

    @Test("shutDown waits until the answer's session and username are saved")
    func shutDownSaves() async throws {
        let vault = try makeVault()
        let login = await signedInWhileSaving(vault)
        #expect(
            await eventually { await login.state.signedInAccount == "bob" },
            "the screen shows the login before the save is done")
        await login.send(.disappeared)
        await login.shutDown()
        #expect(try await vault.session(named: "access", account: "bob") != nil)
        #expect(try await vault.lastUsername() == "bob")
    }

    @Test("a logout while the session of the login before it is still being saved wipes that session")
    func logoutWaitsForSave() async throws {
        let vault = try makeVault()
        let login = await signedInWhileSaving(vault)
        #expect(await eventually { await login.state.signedInAccount == "bob" })
        await login.send(.logoutRequested) // the save is still sleeping
        await login.settle()
        #expect(try await vault.sessions().isEmpty, "the logout ran after the save, and wiped it")
        let events = try await vault.auditEntries().map(\.event)
        let saved = try #require(events.lastIndex(of: .sessionSaved))
        let loggedOut = try #require(events.lastIndex(of: .logout))
        #expect(saved < loggedOut)
    }

    @Test("shutDown stops the countdown instead of waiting for the rate limit to end", .timeLimit(.minutes(1)))
    func shutDownDuringCountdown() async throws {
        let clock = ManualClock() // time does not pass: waiting for the limit to end would never return
        let login = LoginController(
            authenticator: ScriptedAuthenticator([.failure(.rateLimited(retryAfter: .seconds(60)))]),
            store: try makeVault(), configuration: F.configuration, clock: clock,
            output: OutputRecorder().handler)
        await login.appear()
        await login.send(.usernameChanged("bob"))
        await login.send(.passwordChanged(F.password))
        await login.send(.submitTapped)
        #expect(await eventually { clock.sleeping == 1 }, "the countdown is waiting for its first tick")
        await login.shutDown()
        #expect(await login.state.isRateLimited, "the limit still holds: shutDown did not wait for it")
        #expect(clock.sleeping == 0, "the countdown stopped")
    }

    @Test("an injected clock times the answers and drives the countdown exactly")
    func injectedClock() async throws {
        let clock = ManualClock()
        let start = clock.now
        let authenticator = ScriptedAuthenticator([.failure(.rateLimited(retryAfter: .seconds(30)))])
        let login = LoginController(
            authenticator: authenticator, store: try makeVault(), configuration: F.configuration,
            tickInterval: .seconds(10), clock: clock, output: OutputRecorder().handler)
        await login.appear()
        await login.send(.usernameChanged("bob"))
        await login.send(.passwordChanged(F.password))
        await login.send(.submitTapped)
        #expect(await eventually { await !login.state.isInFlight })
        var state = await login.state
        #expect(state.now == start && state.retryDeadline == start.advanced(by: .seconds(30)))
        #expect(state.retryRemaining == .seconds(30), "no real time passes on the injected clock")
        #expect(await eventually { clock.sleeping == 1 })

        clock.advance(by: .seconds(10))
        #expect(await eventually { await login.state.retryRemaining == .seconds(20) })
        state = await login.state
        #expect(state.now == start.advanced(by: .seconds(10)) && !state.canSubmit)

        #expect(await eventually { clock.sleeping == 1 })
        clock.advance(by: .seconds(19))
        #expect(await login.state.isRateLimited, "the next tick is not due before its interval")
        clock.advance(by: .seconds(1))
        await login.settle()
        state = await login.state
        #expect(!state.isRateLimited && state.message == nil && state.canSubmit)
        #expect(state.now == start.advanced(by: .seconds(30)))
        #expect(clock.sleeping == 0, "the countdown stopped with the rate limit")
    }

    @Test("the login's grant is one item holding both tokens, each with its own expiry")
    func tokenLifetimes() async throws {
        let store = try makeVault()
        let hour = Date().addingTimeInterval(3600)
        let week = Date().addingTimeInterval(7 * 86_400)
        let tokens = SessionTokens(
            accessToken: SecretBytes(utf8: "a"), refreshToken: SecretBytes(utf8: "r"), expires: hour,
            refreshTokenExpires: week)
        try await store.saveSession(tokens, account: "bob")
        let grant = try #require(try await store.grant(named: "access", account: "bob"))
        #expect(grant.accessToken == SecretBytes(utf8: "a") && grant.refreshToken == SecretBytes(utf8: "r"))
        #expect(abs((grant.accessTokenExpires ?? .distantPast).timeIntervalSince(hour)) < 1)
        #expect(abs((grant.refreshTokenExpires ?? .distantPast).timeIntervalSince(week)) < 1)
        let listed = try #require(try await store.sessions(account: "bob").first)
        #expect(
            abs((listed.expires ?? .distantPast).timeIntervalSince(week)) < 1, "the item lives as its refresh token")
        let access = try #require(try await store.session(named: "access", account: "bob"))
        #expect(
            access.value == SecretBytes(utf8: "a") && abs((access.expires ?? .distantPast).timeIntervalSince(hour)) < 1)
    }

    @Test("a login without a refresh token removes the refresh token of an earlier login")
    func staleRefreshToken() async throws {
        let store = try makeVault()
        try await store.saveSession(F.tokens, account: "bob")
        try await store.saveSession(SessionTokens(accessToken: SecretBytes(utf8: "second-access")), account: "bob")
        #expect(try await store.session(named: "access", account: "bob")?.value == SecretBytes(utf8: "second-access"))
        #expect(try await store.grant(named: "access", account: "bob")?.refreshToken == nil)
    }
}
