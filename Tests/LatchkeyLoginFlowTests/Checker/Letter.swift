import Latchkey

@testable import LatchkeyLoginFlow

/// One letter of the checker's alphabet: an event, made concrete for a given state
/// (responses carry the state's current or a stale generation; times follow the state's clock).
enum Letter: Hashable, CustomStringConvertible {
    case username(String)
    case password(String)
    case clearPassword
    case submit
    case returnIn(Login.Field)
    case response(Outcome, stale: Bool)
    case appear(remembered: String?, remembers: Bool)
    case disappear
    case logout
    case toggleRemember
    case tick
    /// The store could not keep the session of the signed-in account (or, stale, of another).
    case sessionSaveFailed(stale: Bool)

    /// Every server answer class.
    enum Outcome: CaseIterable {
        case success, invalidCredentials, accountLocked, rateLimited, networkUnreachable,
            timedOut, serverError, cancelled, malformedResponse

        var result: AuthenticationResult {
            switch self {
            case .success: .success(Fixtures.tokens)
            case .invalidCredentials: .failure(.invalidCredentials)
            case .accountLocked: .failure(.accountLocked)
            case .rateLimited: .failure(.rateLimited(retryAfter: Letter.retryAfter))
            case .networkUnreachable: .failure(.networkUnreachable)
            case .timedOut: .failure(.timedOut)
            case .serverError: .failure(.serverError)
            case .cancelled: .failure(.cancelled)
            case .malformedResponse: .failure(.malformedResponse)
            }
        }
    }

    static let validUsername = "alice"
    static let rejectedUsername = "al ice"
    static let rememberedUsername = "carol"
    static let validPassword = SecretBytes(utf8: "pw")
    static let tickStep = Duration.seconds(10)
    static let responseDelay = Duration.seconds(1)
    static let retryAfter = Duration.seconds(15)

    /// The whole alphabet.
    static let all: [Letter] =
        ["", validUsername, rejectedUsername].map(Letter.username)
        + ["", "pw"].map(Letter.password)
        + [.clearPassword, .submit, .returnIn(.username), .returnIn(.password)]
        + Outcome.allCases.flatMap { [Letter.response($0, stale: false), .response($0, stale: true)] }
        + [.appear(remembered: rememberedUsername, remembers: true), .appear(remembered: nil, remembers: false)]
        + [.disappear, .logout, .toggleRemember, .tick]
        + [.sessionSaveFailed(stale: false), .sessionSaveFailed(stale: true)]

    /// The account a current save failure names: the signed-in one (or, when
    /// nobody is, the one a late report after logout would name).
    static func failedAccount(of state: Login.State, stale: Bool) -> String {
        let current = state.signedInAccount ?? validUsername
        return stale ? current + "-earlier" : current
    }

    /// The generation a current response carries: the pending one, or else the latest sent.
    static func currentGeneration(of state: Login.State) -> Int {
        state.pendingGeneration ?? state.lastGeneration
    }

    /// The concrete event for `state`.
    func event(for state: Login.State) -> Login.Event {
        let clock = state.now ?? Fixtures.origin
        switch self {
        case .username(let text): return .usernameChanged(text)
        case .password(let text): return .passwordChanged(text.isEmpty ? SecretBytes() : Letter.validPassword)
        case .clearPassword: return .passwordCleared
        case .submit: return .submitTapped
        case .returnIn(let field): return .returnPressed(in: field)
        case .response(let outcome, let stale):
            let current = Letter.currentGeneration(of: state)
            return .responseReceived(
                generation: stale ? current - 1 : current, result: outcome.result,
                at: clock.advanced(by: Letter.responseDelay))
        case .appear(let remembered, let remembers):
            return .appeared(rememberedUsername: remembered, remembersUsername: remembers)
        case .disappear: return .disappeared
        case .logout: return .logoutRequested
        case .toggleRemember: return .rememberUsernameChanged(!state.remembersUsername)
        case .tick: return .tick(now: clock.advanced(by: Letter.tickStep))
        case .sessionSaveFailed(let stale):
            return .sessionSaveFailed(account: Letter.failedAccount(of: state, stale: stale))
        }
    }

    var description: String {
        switch self {
        case .username(let text): "username(\"\(text)\")"
        case .password(let text): text.isEmpty ? "password(empty)" : "password(valid)"
        case .clearPassword: "clearPassword"
        case .submit: "submit"
        case .returnIn(let field): "return(\(field))"
        case .response(let outcome, let stale): "response(\(outcome)\(stale ? ", stale" : ""))"
        case .appear(let remembered, let remembers): "appear(\(remembered ?? "nil"), remembers: \(remembers))"
        case .disappear: "disappear"
        case .logout: "logout"
        case .toggleRemember: "toggleRemember"
        case .tick: "tick"
        case .sessionSaveFailed(let stale): "sessionSaveFailed(\(stale ? "stale" : "current"))"
        }
    }
}
