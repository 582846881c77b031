import Latchkey
import Testing

@testable import LatchkeyLoginFlow

/// The state as a value a UI can build for a preview and compare.
@Suite("State", .sandboxed)
struct StateTests {
    typealias F = Fixtures

    @Test("the memberwise initializer builds the state the reducer reaches, and it compares equal")
    func previewEqualsReached() {
        let reached = F.inFlight()
        let built = Login.State(
            configuration: F.configuration, isVisible: true, username: "alice", password: F.password,
            remembersUsername: true, pendingGeneration: 1)
        #expect(built == reached)
        #expect(built.showsProgress && !built.fieldsEnabled && !built.canSubmit && built.lastGeneration == 1)

        let answered = Login.reduce(
            reached, .responseReceived(generation: 1, result: .failure(.serverError), at: F.at(1))
        ).0
        let preview = Login.State(
            configuration: F.configuration, isVisible: true, username: "alice", password: F.password,
            remembersUsername: true, lastGeneration: 1, message: .serverError, now: F.at(1))
        #expect(preview == answered)
        #expect(preview.canSubmit)
    }

    @Test("the defaults are the screen before it appears")
    func defaults() {
        let state = Login.State()
        #expect(state == Login.State(configuration: Login.Configuration()))
        #expect(!state.isVisible && state.username.isEmpty && state.password.isEmpty && state.lastGeneration == 0)
        #expect(state.message == nil && state.signedInAccount == nil && !state.canSubmit)
    }

    @Test("a preview state is driven on by the reducer like any other")
    func previewIsLive() {
        let signedIn = Login.State(isVisible: true, username: "alice", lastGeneration: 3, signedInAccount: "alice")
        let (failed, effects) = Login.reduce(signedIn, .sessionSaveFailed(account: "alice"))
        #expect(effects.isEmpty)
        #expect(
            failed
                == Login.State(
                    isVisible: true, username: "alice", lastGeneration: 3, message: .sessionNotSaved,
                    signedInAccount: "alice"))
        let (loggedOut, logout) = Login.reduce(failed, .logoutRequested)
        #expect(logout.contains { $0.logsOut(account: "alice") })
        #expect(loggedOut.message == nil && loggedOut.signedInAccount == nil)
    }

    /// One change per stored property; each must make the state unequal.
    static let changes: [(String, @Sendable (Login.State) -> Login.State)] = [
        ("isVisible", { with($0, isVisible: false) }),
        ("username", { with($0, username: "bob") }),
        ("password", { with($0, password: SecretBytes(utf8: "other")) }),
        ("remembersUsername", { with($0, remembersUsername: false) }),
        ("pendingGeneration", { with($0, pendingGeneration: 2, lastGeneration: 2) }),
        ("lastGeneration", { with($0, lastGeneration: 2) }),
        ("message", { with($0, message: .timedOut) }),
        ("signedInAccount", { with($0, signedInAccount: "alice") }),
        ("now", { with($0, now: F.at(7)) }),
        ("retryDeadline", { with($0, retryDeadline: F.at(30)) }),
    ]

    @Test("a difference in any stored property makes two states unequal", arguments: changes.map(\.0))
    func everyPropertyCompared(property: String) throws {
        let base = Login.State(
            configuration: F.configuration, isVisible: true, username: "alice", password: F.password,
            remembersUsername: true, lastGeneration: 1, message: .serverError, now: F.at(1))
        let change = try #require(Self.changes.first { $0.0 == property }).1
        #expect(change(base) != base)
        #expect(change(base) == change(base))
    }

    @Test("states whose validators disagree about the same fields are unequal")
    func derivedSubmitCompared() {
        let accepting = Login.State(isVisible: true, username: "al ice", password: F.password)
        let rejecting = Login.State(
            configuration: F.configuration, isVisible: true, username: "al ice", password: F.password)
        #expect(accepting.canSubmit && !rejecting.canSubmit)
        #expect(accepting != rejecting)
    }

    /// `state` with the given properties replaced, through the public initializer.
    private static func with(
        _ state: Login.State, isVisible: Bool? = nil, username: String? = nil, password: SecretBytes? = nil,
        remembersUsername: Bool? = nil, pendingGeneration: Int? = nil, lastGeneration: Int? = nil,
        message: MessageKey? = nil, signedInAccount: String? = nil, now: ContinuousClock.Instant? = nil,
        retryDeadline: ContinuousClock.Instant? = nil
    ) -> Login.State {
        Login.State(
            configuration: state.configuration,
            isVisible: isVisible ?? state.isVisible,
            username: username ?? state.username,
            password: password ?? state.password,
            remembersUsername: remembersUsername ?? state.remembersUsername,
            pendingGeneration: pendingGeneration ?? state.pendingGeneration,
            lastGeneration: lastGeneration ?? state.lastGeneration,
            message: message ?? state.message,
            signedInAccount: signedInAccount ?? state.signedInAccount,
            now: now ?? state.now,
            retryDeadline: retryDeadline ?? state.retryDeadline)
    }
}
