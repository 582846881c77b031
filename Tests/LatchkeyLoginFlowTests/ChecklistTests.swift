import Latchkey
import Testing

@testable import LatchkeyLoginFlow

/// One scenario per item of the login-screen checklist (issue 8).
@Suite("Login checklist", .sandboxed)
struct ChecklistTests {
    typealias F = Fixtures

    @Test("checklist 1: submit is impossible until the input makes sense")
    func inputMustMakeSense() {
        let appeared = F.run([.appeared(rememberedUsername: nil, remembersUsername: true)]).0
        #expect(!appeared.canSubmit)
        #expect(!F.run([.usernameChanged("alice")], from: appeared).0.canSubmit)
        #expect(!F.run([.passwordChanged(F.password)], from: appeared).0.canSubmit)
        #expect(
            !F.run([.usernameChanged("al ice"), .passwordChanged(F.password)], from: appeared).0.canSubmit,
            "the validator rejects it")
        #expect(F.run([.usernameChanged("alice"), .passwordChanged(F.password)], from: appeared).0.canSubmit)
        let (_, effects) = Login.reduce(
            F.run([.usernameChanged("al ice"), .passwordChanged(F.password)], from: appeared).0, .submitTapped)
        #expect(effects.isEmpty)
    }

    @Test("checklist 2: whether submit is possible is re-derived on every change of either field")
    func rederivedOnEveryChange() {
        var state = F.run([.appeared(rememberedUsername: nil, remembersUsername: true)]).0
        let steps: [(Login.Event, Bool)] = [
            (.usernameChanged("alice"), false),
            (.passwordChanged(F.password), true),
            (.usernameChanged(""), false),
            (.usernameChanged("bob"), true),
            (.passwordChanged(SecretBytes()), false),
            (.passwordChanged(SecretBytes(utf8: "x")), true),
            (.usernameChanged("b ob"), false),
        ]
        for (event, expected) in steps {
            state = Login.reduce(state, event).0
            #expect(state.canSubmit == expected, "after \(event)")
        }
    }

    @Test("checklist 3: submit is impossible initially")
    func impossibleInitially() {
        let initial = Login.State(configuration: F.configuration)
        #expect(!initial.canSubmit)
        #expect(Login.reduce(initial, .submitTapped).1.isEmpty)
        let prefilled = F.run([.appeared(rememberedUsername: "carol", remembersUsername: true)]).0
        #expect(prefilled.username == "carol")
        #expect(!prefilled.canSubmit)
    }

    @Test("checklist 4: submit is impossible again whenever the screen reappears")
    func impossibleOnReappear() {
        let afterLogout = F.run(
            F.filledIn + [
                .submitTapped,
                .responseReceived(generation: 1, result: .success(F.tokens), at: F.at(1)),
                .disappeared,
                .logoutRequested,
                .appeared(rememberedUsername: "alice", remembersUsername: true),
            ]
        ).0
        #expect(afterLogout.isVisible && afterLogout.username == "alice" && !afterLogout.canSubmit)
        let reappeared = F.run(
            F.filledIn + [.disappeared, .appeared(rememberedUsername: nil, remembersUsername: true)]
        ).0
        #expect(!reappeared.canSubmit)
        #expect(reappeared.password.isEmpty)
    }

    @Test("checklist 5: the password field is cleared for the next attempt")
    func clearedForNextAttempt() {
        let state = F.run(
            [.responseReceived(generation: 1, result: .failure(.invalidCredentials), at: F.at(1))], from: F.inFlight()
        ).0
        #expect(state.password.isEmpty)
        #expect(state.username == "alice")
        #expect(!state.canSubmit)
        #expect(F.run([.passwordChanged(F.password)], from: state).0.canSubmit)
    }

    @Test("checklist 6: submit is impossible while waiting for the server")
    func impossibleWhileWaiting() {
        let state = F.inFlight()
        #expect(state.isInFlight)
        #expect(!state.canSubmit)
        for event: Login.Event in [.submitTapped, .returnPressed(in: .password)] {
            let (next, effects) = Login.reduce(state, event)
            #expect(effects.isEmpty)
            #expect(next.pendingGeneration == 1 && next.lastGeneration == 1)
        }
    }

    @Test("checklist 7: a programmatic clear of the password makes submit impossible")
    func programmaticClear() {
        let filled = F.run(F.filledIn).0
        #expect(filled.canSubmit)
        let cleared = Login.reduce(filled, .passwordCleared).0
        #expect(cleared.password.isEmpty)
        #expect(!cleared.canSubmit)
        #expect(Login.reduce(cleared, .returnPressed(in: .password)).1.isEmpty)
    }

    @Test("checklist 8: the password is cleared only after the response arrives, never at submit")
    func clearedOnlyAfterResponse() throws {
        let filled = F.run(F.filledIn).0
        let (sent, effects) = Login.reduce(filled, .submitTapped)
        let request = try #require(F.requests(in: effects).first)
        #expect(request.password == F.password)
        #expect(sent.password == F.password, "still shown while waiting")
        let answered = Login.reduce(
            sent, .responseReceived(generation: request.generation, result: .failure(.invalidCredentials), at: F.at(1))
        ).0
        #expect(answered.password.isEmpty)
    }

    @Test(
        "checklist 9: the password is cleared only after an authentication failure or success",
        arguments: [
            LoginFailure.invalidCredentials, .accountLocked, .rateLimited(retryAfter: .seconds(30)),
            .networkUnreachable, .timedOut, .serverError, .cancelled, .malformedResponse,
        ])
    func passwordRule(failure: LoginFailure) {
        let state = F.run(
            [.responseReceived(generation: 1, result: .failure(failure), at: F.at(1))], from: F.inFlight()
        ).0
        switch failure {
        case .invalidCredentials, .accountLocked:
            #expect(state.password.isEmpty)
        default:
            #expect(state.password == F.password)
        }
        let success = F.run(
            [.responseReceived(generation: 1, result: .success(F.tokens), at: F.at(1))], from: F.inFlight()
        ).0
        #expect(success.password.isEmpty)
    }

    @Test("checklist 10: the last username is remembered and prefilled, unless the user opted out")
    func isUsernameMemoryAllowed() {
        let (_, effects) = Login.reduce(
            F.inFlight(remembers: true), .responseReceived(generation: 1, result: .success(F.tokens), at: F.at(1)))
        #expect(effects.contains { if case .rememberUsername("alice") = $0 { true } else { false } })
        #expect(effects.contains { $0.savesSession(account: "alice") })

        let (prefilled, focus) = Login.reduce(
            Login.State(configuration: F.configuration), .appeared(rememberedUsername: "alice", remembersUsername: true)
        )
        #expect(prefilled.username == "alice" && prefilled.remembersUsername)
        #expect(focus.first?.focusesPassword == true)

        let appeared = F.run([.appeared(rememberedUsername: "alice", remembersUsername: true)]).0
        let (optedOut, toggle) = Login.reduce(appeared, .rememberUsernameChanged(false))
        #expect(!optedOut.remembersUsername)
        #expect(toggle.first?.setsRemembering(false) == true)
        let afterOptOut = F.run([.passwordChanged(F.password), .submitTapped], from: optedOut).0
        let (_, successEffects) = Login.reduce(
            afterOptOut, .responseReceived(generation: 1, result: .success(F.tokens), at: F.at(1)))
        #expect(!successEffects.contains { $0.remembersUsername })
        #expect(successEffects.contains { $0.savesSession(account: "alice") })

        let notPrefilled = F.run([.appeared(rememberedUsername: "alice", remembersUsername: false)]).0
        #expect(notPrefilled.username.isEmpty)
    }

    @Test(
        "checklist 11: progress shows exactly while a request is in flight, and hides on every outcome",
        arguments: Letter.Outcome.allCases)
    func progress(outcome: Letter.Outcome) {
        #expect(!F.run(F.filledIn).0.showsProgress)
        let inFlight = F.inFlight()
        #expect(inFlight.showsProgress)
        let answered = Login.reduce(inFlight, .responseReceived(generation: 1, result: outcome.result, at: F.at(1))).0
        #expect(!answered.showsProgress)
    }

    @Test("checklist 12: one specific inline message per failure class, never naming the wrong field")
    func messages() {
        let failures: [LoginFailure] = [
            .invalidCredentials, .accountLocked, .rateLimited(retryAfter: .seconds(5)),
            .networkUnreachable, .timedOut, .serverError, .malformedResponse,
        ]
        var shown: [MessageKey] = []
        for failure in failures {
            let state = F.run(
                [.responseReceived(generation: 1, result: .failure(failure), at: F.at(1))], from: F.inFlight()
            ).0
            if let message = state.message { shown.append(message) }
        }
        #expect(Set(shown).count == failures.count, "each class has its own message")
        #expect(
            F.run([.responseReceived(generation: 1, result: .failure(.cancelled), at: F.at(1))], from: F.inFlight()).0
                .message == nil)
        // The credentials message names both fields in every language, so it cannot say which was wrong.
        let fieldWords: [LoginLanguage: (String, String)] = [
            .english: ("username", "password"), .german: ("Benutzername", "Passwort"),
            .simplifiedChinese: ("用户名", "密码"),
        ]
        for (language, words) in fieldWords {
            let text = MessageKey.invalidCredentials.text(in: language)
            #expect(text.contains(words.0) && text.contains(words.1), "\(language)")
        }
    }

    @Test(
        "checklist 13: the fields cannot be edited in flight, and can again on every outcome",
        arguments: Letter.Outcome.allCases)
    func fieldsDisabledInFlight(outcome: Letter.Outcome) {
        let inFlight = F.inFlight()
        #expect(!inFlight.fieldsEnabled)
        let edited = F.run(
            [
                .usernameChanged("mallory"), .passwordChanged(SecretBytes(utf8: "other")),
                .rememberUsernameChanged(false),
            ], from: inFlight
        ).0
        #expect(edited == inFlight)
        let answered = Login.reduce(inFlight, .responseReceived(generation: 1, result: outcome.result, at: F.at(1))).0
        #expect(answered.fieldsEnabled)
        #expect(Login.reduce(answered, .usernameChanged("bob")).0.username == "bob")
    }

    @Test(
        "checklist 14: Return in the username field focuses the password; Return in the password field submits if possible"
    )
    func returnKeys() {
        let appeared = F.run([.appeared(rememberedUsername: nil, remembersUsername: true), .usernameChanged("alice")]).0
        let (afterUsernameReturn, focus) = Login.reduce(appeared, .returnPressed(in: .username))
        #expect(focus.count == 1 && focus.first?.focusesPassword == true)
        #expect(afterUsernameReturn == appeared)
        #expect(Login.reduce(appeared, .returnPressed(in: .password)).1.isEmpty, "empty password: Return does nothing")
        let filled = Login.reduce(appeared, .passwordChanged(F.password)).0
        let (sent, effects) = Login.reduce(filled, .returnPressed(in: .password))
        #expect(F.requests(in: effects).count == 1)
        #expect(sent.isInFlight)
    }

    @Test("checklist 15: messages and labels come from English, German and Simplified Chinese tables with every key")
    func localisationTables() {
        for language in LoginLanguage.allCases {
            #expect(Set(language.table.keys) == Set(MessageKey.allCases), "\(language)")
        }
        #expect(MessageKey.logInButton.text(in: .german) == "Anmelden")
        #expect(MessageKey.usernameLabel.text(in: .simplifiedChinese) == "用户名")
    }

    @Test("checklist 16: a response to an earlier attempt, after the screen disappeared, or after logout is ignored")
    func staleResponses() {
        // An earlier attempt: the first request is abandoned by disappearing, then a second is sent.
        let second = F.run([.disappeared] + F.filledIn + [.submitTapped], from: F.inFlight()).0
        #expect(second.pendingGeneration == 2)
        let (afterEarlier, earlierEffects) = Login.reduce(
            second, .responseReceived(generation: 1, result: .success(F.tokens), at: F.at(1)))
        #expect(afterEarlier == second && earlierEffects.isEmpty)

        for abandon: Login.Event in [.disappeared, .logoutRequested] {
            let (abandoned, cancel) = Login.reduce(F.inFlight(), abandon)
            #expect(cancel.contains { $0.cancels(1) })
            let (after, effects) = Login.reduce(
                abandoned, .responseReceived(generation: 1, result: .success(F.tokens), at: F.at(1)))
            #expect(after == abandoned && effects.isEmpty, "after \(abandon)")
        }
    }
}
