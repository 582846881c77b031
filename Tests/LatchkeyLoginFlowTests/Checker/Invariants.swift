import Latchkey

@testable import LatchkeyLoginFlow

/// One step of an event sequence, as the checker saw it.
struct Step {
    let pre: Login.State
    let letter: Letter
    let event: Login.Event
    let post: Login.State
    let effects: [Login.Effect]
}

/// The checklist's invariants, checked after every step.
enum Invariants {
    /// The messages an error line may show; none says which field was wrong.
    static let errorMessages: Set<MessageKey?> = [
        nil, .invalidCredentials, .accountLocked, .rateLimited, .networkUnreachable,
        .timedOut, .serverError, .malformedResponse, .sessionNotSaved,
    ]

    /// What `step` violates; empty when it keeps every invariant.
    static func violations(of step: Step) -> [String] {
        var problems: [String] = []
        func expect(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append(problem()) }
        }
        let pre = step.pre
        let post = step.post
        let effects = step.effects
        let unchanged = pre == post && effects.isEmpty

        // The state's own equality agrees with comparing every stored property.
        expect((pre == post) == (Snapshot(pre) == Snapshot(post)), "State equality compares every stored property")

        // Derived values, on every state.
        expect(post.showsProgress == post.isInFlight, "progress visible iff a request is in flight")
        expect(post.fieldsEnabled == !post.isInFlight, "fields disabled iff a request is in flight")
        let derived =
            post.isVisible && post.pendingGeneration == nil && post.retryDeadline == nil
            && post.signedInAccount == nil && !post.username.isEmpty && !post.password.isEmpty
            && post.configuration.validator(post.username, post.password)
        expect(post.canSubmit == derived, "canSubmit equals what the fields say")
        expect(!(post.isInFlight && post.canSubmit), "canSubmit false while in flight")
        expect(!(post.isRateLimited && post.canSubmit), "canSubmit false while rate-limited")
        expect(!post.isInFlight || post.isVisible, "a request is in flight only while the screen shows")
        expect(
            post.pendingGeneration.map { $0 == post.lastGeneration } ?? true, "the request in flight is the latest sent"
        )
        expect(post.lastGeneration >= pre.lastGeneration, "generation ids never go back")
        expect(errorMessages.contains(post.message), "the message is one failure class's, naming no field")
        expect(
            post.message != .sessionNotSaved || post.signedInAccount != nil,
            "the session-not-saved message shows only while signed in")

        // Requests.
        let requests = Fixtures.requests(in: effects)
        expect(requests.count <= 1, "at most one request per event")
        if let request = requests.first {
            expect(pre.canSubmit, "a request is sent only when canSubmit was true")
            expect(!pre.isInFlight, "at most one request in flight")
            expect(!request.username.isEmpty && !request.password.isEmpty, "a request never carries an empty field")
            expect(
                request.username == pre.username && request.password == pre.password,
                "the request carries the fields as shown")
            expect(
                request.generation > pre.lastGeneration && post.pendingGeneration == request.generation,
                "the request has a new generation id and is in flight")
            expect(post.password == pre.password, "the password is not cleared at submit")
            expect(
                step.letter == .submit || step.letter == .returnIn(.password),
                "only submit or Return in the password sends")
        }
        if post.isInFlight {
            expect(
                pre.pendingGeneration == post.pendingGeneration || requests.count == 1,
                "a request is in flight only by sending it")
        }

        // Rate limit: only time ends it, and its deadline never moves while it holds.
        if let deadline = pre.retryDeadline {
            if let after = post.retryDeadline {
                expect(after == deadline, "the rate-limit deadline does not move")
            } else {
                expect(
                    step.letter == .tick && (post.now.map { $0 >= deadline } ?? false),
                    "a rate limit ends only when its deadline passes")
            }
        }

        // Store effects happen only for an accepted success.
        let accepted: Bool
        if case .responseReceived(let generation, _, _) = step.event {
            accepted = generation == pre.pendingGeneration
        } else {
            accepted = false
        }
        let success = accepted && step.letter == .response(.success, stale: false)
        expect(success || !effects.contains(where: \.savesSession), "a session is saved only after success")
        expect(success || !effects.contains(where: \.remembersUsername), "a username is remembered only after success")

        switch step.letter {
        case .appear(let remembered, let remembers):
            expect(!post.canSubmit, "submit impossible right after the screen appears")
            expect(
                post.isVisible && !post.isInFlight && post.password.isEmpty,
                "appear shows an idle screen with an empty password")
            expect(
                post.username == (remembers ? remembered ?? "" : ""),
                "appear prefills the remembered username only when remembering is on")
            expect(post.remembersUsername == remembers, "the toggle shows the stored choice")
            if let generation = pre.pendingGeneration {
                expect(effects.contains { $0.cancels(generation) }, "appear cancels the request in flight")
            }
        case .disappear:
            expect(
                !post.isVisible && !post.isInFlight && post.password.isEmpty,
                "disappear abandons the request and clears the password")
        case .logout:
            expect(
                !post.isInFlight && post.signedInAccount == nil && post.password.isEmpty,
                "logout abandons the request and signs out")
            expect(effects.contains { $0.logsOut(account: pre.signedInAccount) }, "logout wipes the signed-in account")
        case .clearPassword:
            expect(post.password.isEmpty && !post.canSubmit, "a programmatic clear makes submit impossible")
        case .username(let text):
            if pre.acceptsInput {
                expect(
                    post.username == text && post.password == pre.password && effects.isEmpty,
                    "a username edit changes only the username")
            } else {
                expect(unchanged, "edits are ignored while the fields are disabled")
            }
        case .password(let text):
            if pre.acceptsInput {
                expect(
                    post.password.isEmpty == text.isEmpty && post.username == pre.username && effects.isEmpty,
                    "a password edit changes only the password")
            } else {
                expect(unchanged, "edits are ignored while the fields are disabled")
            }
        case .returnIn(.username):
            if pre.acceptsInput {
                expect(
                    effects.count == 1 && effects.first?.focusesPassword == true && pre == post,
                    "Return in the username field moves the focus to the password")
            } else {
                expect(unchanged, "Return is ignored while the fields are disabled")
            }
        case .submit, .returnIn(.password):
            expect(requests.count == (pre.canSubmit ? 1 : 0), "submit sends exactly when canSubmit")
            if !pre.canSubmit {
                expect(unchanged, "a submit that is not possible changes nothing")
            }
        case .response(let outcome, let stale):
            expect(!(stale && accepted), "a stale response is never accepted")
            if !accepted {
                expect(unchanged, "a stale response changes nothing")
            } else {
                expect(
                    !post.isInFlight && !post.showsProgress && post.fieldsEnabled,
                    "every outcome ends progress and enables the fields")
                expect(post.username == pre.username, "a response never changes the username")
                checkOutcome(outcome, pre: pre, post: post, effects: effects, expect: expect)
            }
        case .toggleRemember:
            if pre.acceptsInput {
                expect(
                    post.remembersUsername == !pre.remembersUsername && effects.count == 1
                        && effects.first?.setsRemembering(post.remembersUsername) == true,
                    "the toggle stores the user's choice")
            } else {
                expect(unchanged, "the toggle is ignored while the fields are disabled")
            }
        case .tick:
            expect(
                effects.isEmpty && post.username == pre.username && post.password == pre.password,
                "time passing changes no field")
        case .sessionSaveFailed:
            guard case .sessionSaveFailed(let account) = step.event else { break }
            if pre.signedInAccount == account {
                var expected = pre
                expected.message = .sessionNotSaved
                expect(
                    post == expected && effects.isEmpty,
                    "a session that could not be saved is said while signed in, and changes nothing else")
            } else {
                expect(unchanged, "a save failure for an account not signed in changes nothing")
            }
        }
        return problems
    }

    private static func checkOutcome(
        _ outcome: Letter.Outcome, pre: Login.State, post: Login.State, effects: [Login.Effect],
        expect: (Bool, @autoclosure () -> String) -> Void
    ) {
        switch outcome.result {
        case .success:
            expect(post.password.isEmpty && post.message == nil, "success clears the password and the message")
            expect(post.signedInAccount == pre.username, "success signs the account in")
            expect(effects.contains { $0.savesSession(account: pre.username) }, "success saves the session")
            expect(
                effects.contains(where: \.remembersUsername) == pre.remembersUsername,
                "success remembers the username unless opted out")
        case .failure(let failure):
            expect(post.message == failure.messageKey, "each failure class shows its own message")
            if failure.clearsPassword {
                expect(post.password.isEmpty, "the password is cleared after an authentication failure")
            } else {
                expect(post.password == pre.password, "the password is kept after a network or server problem")
            }
            if case .rateLimited = failure {
                expect(
                    post.isRateLimited && post.retryRemaining == Letter.retryAfter && !post.canSubmit,
                    "rate-limited: submit impossible until the deadline, remaining time exposed")
            }
        }
    }
}

extension Login.Effect {
    var savesSession: Bool {
        if case .saveSession = self { true } else { false }
    }

    var remembersUsername: Bool {
        if case .rememberUsername = self { true } else { false }
    }

    var focusesPassword: Bool {
        if case .focus(.password) = self { true } else { false }
    }

    func savesSession(account: String) -> Bool {
        if case .saveSession(_, let saved) = self { saved == account } else { false }
    }

    func cancels(_ generation: Int) -> Bool {
        if case .cancelLoginRequest(let cancelled) = self { cancelled == generation } else { false }
    }

    func logsOut(account: String?) -> Bool {
        if case .logout(let loggedOut) = self { loggedOut == account } else { false }
    }

    func setsRemembering(_ remembers: Bool) -> Bool {
        if case .setUsernameMemoryAllowed(let value) = self { value == remembers } else { false }
    }
}
