import Latchkey

@testable import LatchkeyLoginFlow

/// Reducers with the mistakes popular login screens make, each of which the
/// checker must catch.
enum BrokenReducers {
    /// Each broken reducer, and the invariant the checker must report for it.
    static let all: [(name: String, reduce: ExhaustiveChecker.Reducer, breaks: String)] = [
        (
            "validity stored at the last keystroke: a programmatic clear leaves submit possible",
            ignoresProgrammaticClear,
            "a programmatic clear makes submit impossible"
        ),
        (
            "the password is cleared on a network error", clearsOnNetworkError,
            "the password is kept after a network or server problem"
        ),
        ("the password is cleared at submit", clearsAtSubmit, "the password is not cleared at submit"),
        (
            "Return in the password field submits past a disabled button", returnSubmitsAnyway,
            "a request is sent only when canSubmit was true"
        ),
        ("a tap while a request is in flight sends another", submitsWhileInFlight, "at most one request in flight"),
        ("a response from an earlier attempt is accepted", acceptsStaleResponses, "a stale response changes nothing"),
        (
            "the password is kept after invalid credentials", keepsAfterInvalidCredentials,
            "the password is cleared after an authentication failure"
        ),
        (
            "reappearing forgets the rate limit", reappearForgetsRateLimit,
            "a rate limit ends only when its deadline passes"
        ),
        (
            "the username is remembered after opting out", remembersDespiteOptOut,
            "success remembers the username unless opted out"
        ),
        (
            "a session that could not be saved goes unsaid", ignoresSessionSaveFailure,
            "a session that could not be saved is said while signed in, and changes nothing else"
        ),
        (
            "a late save failure shows after logout", acceptsAnySaveFailure,
            "a save failure for an account not signed in changes nothing"
        ),
    ]

    static func ignoresSessionSaveFailure(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        if case .sessionSaveFailed = event { return (state, []) }
        return Login.reduce(state, event)
    }

    static func acceptsAnySaveFailure(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        guard case .sessionSaveFailed = event, state.signedInAccount == nil else { return Login.reduce(state, event) }
        var next = state
        next.message = .sessionNotSaved
        return (next, [])
    }

    static func ignoresProgrammaticClear(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        if case .passwordCleared = event { return (state, []) }
        return Login.reduce(state, event)
    }

    static func clearsOnNetworkError(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        var (next, effects) = Login.reduce(state, event)
        if case .responseReceived(let generation, .failure(.networkUnreachable), _) = event,
            generation == state.pendingGeneration
        {
            next.password = SecretBytes()
        }
        return (next, effects)
    }

    static func clearsAtSubmit(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        var (next, effects) = Login.reduce(state, event)
        if !Fixtures.requests(in: effects).isEmpty {
            next.password = SecretBytes()
        }
        return (next, effects)
    }

    static func returnSubmitsAnyway(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        guard case .returnPressed(in: .password) = event, state.isVisible, !state.isInFlight else {
            return Login.reduce(state, event)
        }
        return send(state)
    }

    static func submitsWhileInFlight(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        guard case .submitTapped = event, state.isInFlight else { return Login.reduce(state, event) }
        return send(state)
    }

    static func acceptsStaleResponses(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        guard case .responseReceived(let generation, let result, let time) = event,
            generation != state.pendingGeneration
        else {
            return Login.reduce(state, event)
        }
        var current = state
        current.pendingGeneration = generation
        return Login.reduce(current, .responseReceived(generation: generation, result: result, at: time))
    }

    static func keepsAfterInvalidCredentials(_ state: Login.State, _ event: Login.Event) -> (
        Login.State, [Login.Effect]
    ) {
        var (next, effects) = Login.reduce(state, event)
        if case .responseReceived(_, .failure(.invalidCredentials), _) = event {
            next.password = state.password
        }
        return (next, effects)
    }

    static func reappearForgetsRateLimit(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        var (next, effects) = Login.reduce(state, event)
        if case .appeared = event {
            next.retryDeadline = nil
        }
        return (next, effects)
    }

    static func remembersDespiteOptOut(_ state: Login.State, _ event: Login.Event) -> (Login.State, [Login.Effect]) {
        var (next, effects) = Login.reduce(state, event)
        for case .saveSession(_, let account) in effects where !state.remembersUsername {
            effects.append(.rememberUsername(account))
        }
        return (next, effects)
    }

    /// Sends a request from `state` with no questions asked.
    private static func send(_ state: Login.State) -> (Login.State, [Login.Effect]) {
        var next = state
        next.lastGeneration += 1
        next.pendingGeneration = next.lastGeneration
        return (
            next,
            [
                .sendLoginRequest(
                    Login.Request(generation: next.lastGeneration, username: state.username, password: state.password))
            ]
        )
    }
}
