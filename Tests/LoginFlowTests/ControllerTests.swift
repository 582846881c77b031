import Testing
import Latchkey
@testable import LoginFlow

/// The driver against an in-test store (to be re-pointed at Latchkey's `Vault`
/// once it conforms to `LoginCredentialStore`).
@Suite("LoginController")
struct ControllerTests {
    typealias F = Fixtures

    private func controller(_ authenticator: ScriptedAuthenticator, _ store: InTestStore, _ recorder: OutputRecorder, tick: Duration = .seconds(1)) -> LoginController {
        LoginController(authenticator: authenticator, store: store, configuration: F.configuration, tickInterval: tick, output: recorder.handler)
    }

    private func logIn(_ controller: LoginController, as username: String) async {
        await controller.send(.usernameChanged(username))
        await controller.send(.passwordChanged(F.password))
        await controller.send(.submitTapped)
        await controller.settle()
    }

    @Test("appearing prefills the remembered username from the store and focuses the password")
    func prefill() async {
        let recorder = OutputRecorder()
        let login = controller(ScriptedAuthenticator([]), InTestStore(username: "alice"), recorder)
        await login.appear()
        let state = await login.state
        #expect(state.username == "alice" && state.remembersUsername && !state.canSubmit)
        #expect(recorder.focused == [.password])
        #expect(recorder.renders == 1)
    }

    @Test("a successful login saves the session, remembers the username and clears the password")
    func success() async {
        let authenticator = ScriptedAuthenticator([.success(F.tokens)])
        let store = InTestStore()
        let login = controller(authenticator, store, OutputRecorder())
        await login.appear()
        await logIn(login, as: "bob")
        let state = await login.state
        #expect(state.signedInAccount == "bob" && state.password.isEmpty && !state.isInFlight)
        #expect(authenticator.attempts.count == 1 && authenticator.attempts.first?.password == F.password)
        #expect(await store.sessions["bob"]?.accessToken == F.tokens.accessToken)
        #expect(await store.username == "bob")

        await login.send(.logoutRequested)
        #expect(await store.logouts == ["bob"])
        #expect(await store.sessions.isEmpty)
    }

    @Test("opting out on the screen forgets the username in the store, and a later login does not remember it")
    func optOut() async {
        let store = InTestStore(username: "alice")
        let login = controller(ScriptedAuthenticator([.success(F.tokens)]), store, OutputRecorder())
        await login.appear()
        await login.send(.rememberUsernameChanged(false))
        #expect(await store.remembers == false)
        #expect(await store.username == nil)
        await logIn(login, as: "alice")
        #expect(await store.username == nil)
        #expect(await store.sessions["alice"] != nil)
    }

    @Test("disappearing cancels the request in flight, and its answer changes nothing")
    func cancelOnDisappear() async {
        let authenticator = ScriptedAuthenticator([.success(F.tokens)], holds: true)
        let store = InTestStore()
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
        #expect(await store.sessions.isEmpty)
    }

    @Test("a held request shows progress until its answer, then the password is kept on a network error")
    func heldRequest() async {
        let authenticator = ScriptedAuthenticator([.failure(.networkUnreachable)], holds: true)
        let login = controller(authenticator, InTestStore(), OutputRecorder())
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
    func countdown() async {
        let authenticator = ScriptedAuthenticator([.failure(.rateLimited(retryAfter: .milliseconds(60)))])
        let login = controller(authenticator, InTestStore(), OutputRecorder(), tick: .milliseconds(10))
        await login.appear()
        await logIn(login, as: "bob")
        let state = await login.state
        #expect(!state.isRateLimited && state.message == nil)
        #expect(state.password == F.password && state.canSubmit)
    }

    @Test("a store failure is reported, and the screen keeps working")
    func storeFailure() async {
        let recorder = OutputRecorder()
        let store = InTestStore(failing: [.load, .saveSession])
        let login = controller(ScriptedAuthenticator([.success(F.tokens)]), store, recorder)
        await login.appear()
        #expect(await login.state.isVisible)
        #expect(await login.state.remembersUsername == false, "unknown choice: do not remember")
        await logIn(login, as: "bob")
        #expect(recorder.failures == [.load, .saveSession])
        #expect(await login.state.signedInAccount == "bob")
    }
}
