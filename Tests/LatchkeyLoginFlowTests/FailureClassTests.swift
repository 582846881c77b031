import Latchkey
import Testing

@testable import LatchkeyLoginFlow

@Suite("Failure classes", .sandboxed)
struct FailureClassTests {
    typealias F = Fixtures

    /// The failure-class table of issue 8: message and password rule.
    static let table: [(LoginFailure, MessageKey?, clears: Bool)] = [
        (.invalidCredentials, .invalidCredentials, true),
        (.accountLocked, .accountLocked, true),
        (.rateLimited(retryAfter: .seconds(30)), .rateLimited, false),
        (.networkUnreachable, .networkUnreachable, false),
        (.timedOut, .timedOut, false),
        (.serverError, .serverError, false),
        (.cancelled, nil, false),
        (.malformedResponse, .malformedResponse, false),
    ]

    @Test("each class has its message and password rule", arguments: table)
    func classTable(failure: LoginFailure, message: MessageKey?, clears: Bool) {
        #expect(failure.messageKey == message)
        #expect(failure.clearsPassword == clears)
        let state = Login.reduce(F.inFlight(), .responseReceived(generation: 1, result: .failure(failure), at: F.at(1)))
            .0
        #expect(state.message == message)
        #expect(state.password.isEmpty == clears)
        #expect(state.signedInAccount == nil)
    }

    @Test("rate-limited: submit impossible until the deadline, with the remaining time exposed")
    func rateLimitCountdown() {
        var state = F.run(
            [.responseReceived(generation: 1, result: .failure(.rateLimited(retryAfter: .seconds(30))), at: F.at(10))],
            from: F.inFlight()
        ).0
        #expect(state.isRateLimited && !state.canSubmit)
        #expect(state.retryRemaining == .seconds(30))
        state = Login.reduce(state, .tick(now: F.at(25))).0
        #expect(state.retryRemaining == .seconds(15) && !state.canSubmit)
        #expect(Login.reduce(state, .submitTapped).1.isEmpty)
        state =
            F.run(
                [
                    .disappeared, .appeared(rememberedUsername: nil, remembersUsername: true),
                    .usernameChanged("alice"), .passwordChanged(F.password),
                ], from: state
            ).0
        #expect(
            state.isRateLimited && !state.canSubmit && state.message == .rateLimited,
            "reappearing does not lift the limit")
        state = Login.reduce(state, .tick(now: F.at(39))).0
        #expect(!state.canSubmit)
        state = Login.reduce(state, .tick(now: F.at(40))).0
        #expect(!state.isRateLimited && state.retryRemaining == nil && state.message == nil)
        #expect(state.canSubmit)
    }

    @Test(
        "the countdown text rounds up to whole seconds",
        arguments: [
            (Duration.milliseconds(1), "1"), (.seconds(1), "1"), (.milliseconds(1500), "2"), (.seconds(30), "30"),
            (.zero, "0"),
        ])
    func countdownText(remaining: Duration, seconds: String) {
        #expect(
            MessageKey.retryCountdownText(remaining: remaining, in: .english) == "You can try again in \(seconds) s.")
    }

    @Test("success saves the session for the account and signs it in until logout")
    func success() throws {
        let (state, effects) = Login.reduce(
            F.inFlight(), .responseReceived(generation: 1, result: .success(F.tokens), at: F.at(1)))
        #expect(state.signedInAccount == "alice" && state.message == nil && state.password.isEmpty)
        #expect(effects.contains { $0.savesSession(account: "alice") })
        let retyped = Login.reduce(state, .passwordChanged(F.password)).0
        #expect(!retyped.canSubmit, "no second login while signed in")
        let (loggedOut, logout) = Login.reduce(retyped, .logoutRequested)
        #expect(logout.contains { $0.logsOut(account: "alice") })
        #expect(loggedOut.signedInAccount == nil && loggedOut.password.isEmpty)
    }
}
