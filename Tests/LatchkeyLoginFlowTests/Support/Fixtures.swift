import Latchkey

@testable import LatchkeyLoginFlow

/// Values shared by the tests.
enum Fixtures {
    /// The origin of every test's clock.
    static let origin = ContinuousClock.Instant.now
    /// A valid password.
    static let password = SecretBytes(utf8: "correct horse")
    /// The validator the tests use: a username containing a space is rejected.
    static let configuration = Login.Configuration { username, _ in !username.contains(" ") }
    /// A session as a server would issue it.
    static let tokens = SessionTokens(
        accessToken: SecretBytes(utf8: "access-token-canary"), refreshToken: SecretBytes(utf8: "refresh-token-canary"))

    /// Time `seconds` after ``origin``.
    static func at(_ seconds: Int) -> ContinuousClock.Instant {
        origin.advanced(by: .seconds(seconds))
    }

    /// Runs `events` through the real reducer from a fresh state.
    /// - Returns: The final state and the effects of the last event.
    static func run(_ events: [Login.Event], from start: Login.State = Login.State(configuration: configuration)) -> (
        Login.State, [Login.Effect]
    ) {
        events.reduce((start, [])) { result, event in Login.reduce(result.0, event) }
    }

    /// The events that bring a screen to "ready to submit" as alice.
    static let filledIn: [Login.Event] = [
        .appeared(rememberedUsername: nil, remembersUsername: true),
        .usernameChanged("alice"),
        .passwordChanged(password),
    ]

    /// The state with a request in flight (generation 1) for alice.
    static func inFlight(remembers: Bool = true) -> Login.State {
        run([
            .appeared(rememberedUsername: nil, remembersUsername: remembers),
            .usernameChanged("alice"),
            .passwordChanged(password),
            .submitTapped,
        ]).0
    }

    /// The requests among `effects`.
    static func requests(in effects: [Login.Effect]) -> [Login.Request] {
        effects.compactMap { effect in
            if case .sendLoginRequest(let request) = effect { request } else { nil }
        }
    }
}
