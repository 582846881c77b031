import Latchkey

extension Login {
    /// Computes the next state and the effects of one event. Pure: no I/O, no
    /// clock, no randomness.
    ///
    /// An event the current state cannot accept (a submit while submit is
    /// impossible, an edit while a request is in flight, a response to an
    /// earlier attempt) returns the state unchanged and no effects.
    /// - Parameters:
    ///   - state: The current state.
    ///   - event: What happened.
    /// - Returns: The next state and the effects to run, in order.
    public static func reduce(_ state: State, _ event: Event) -> (State, [Effect]) {
        var next = state
        switch event {
        case .appeared(let rememberedUsername, let remembersUsername):
            var effects = next.abandonRequest()
            next.isVisible = true
            next.remembersUsername = remembersUsername
            next.username = remembersUsername ? rememberedUsername ?? "" : ""
            next.password = SecretBytes()
            next.message = next.isRateLimited ? .rateLimited : nil
            effects.append(.focus(next.username.isEmpty ? .username : .password))
            return (next, effects)

        case .disappeared:
            let effects = next.abandonRequest()
            next.isVisible = false
            next.password = SecretBytes()
            return (next, effects)

        case .usernameChanged(let username):
            guard state.acceptsInput else { return (state, []) }
            next.username = username
            return (next, [])

        case .passwordChanged(let password):
            guard state.acceptsInput else { return (state, []) }
            next.password = password
            return (next, [])

        case .passwordCleared:
            next.password = SecretBytes()
            return (next, [])

        case .returnPressed(in: .username):
            guard state.acceptsInput else { return (state, []) }
            return (next, [.focus(.password)])

        case .returnPressed(in: .password), .submitTapped:
            guard state.canSubmit else { return (state, []) }
            next.lastGeneration += 1
            next.pendingGeneration = next.lastGeneration
            next.message = nil
            let request = Request(generation: next.lastGeneration, username: next.username, password: next.password)
            return (next, [.sendLoginRequest(request)])

        case .responseReceived(let generation, let result, let time):
            guard state.pendingGeneration == generation else { return (state, []) }
            next.pendingGeneration = nil
            next.advanceClock(to: time)
            return next.apply(result)

        case .rememberUsernameChanged(let remembers):
            guard state.acceptsInput, remembers != state.remembersUsername else { return (state, []) }
            next.remembersUsername = remembers
            return (next, [.setUsernameMemoryAllowed(remembers)])

        case .logoutRequested:
            var effects = next.abandonRequest()
            effects.append(.logout(account: next.signedInAccount))
            next.signedInAccount = nil
            next.password = SecretBytes()
            next.message = next.isRateLimited ? .rateLimited : nil
            return (next, effects)

        case .tick(let now):
            next.advanceClock(to: now)
            return (next, [])

        case .sessionSaveFailed(let account):
            // A failure reported for an account that has since logged out is stale.
            guard state.signedInAccount == account else { return (state, []) }
            next.message = .sessionNotSaved
            return (next, [])
        }
    }
}

extension Login.State {
    /// Forgets the request in flight, if any, so its response is stale.
    /// - Returns: The effect cancelling it, or none.
    fileprivate mutating func abandonRequest() -> [Login.Effect] {
        guard let pendingGeneration else { return [] }
        self.pendingGeneration = nil
        return [.cancelLoginRequest(generation: pendingGeneration)]
    }

    /// Moves the clock forward (never back) and ends a rate limit whose deadline passed.
    fileprivate mutating func advanceClock(to time: ContinuousClock.Instant) {
        if now.map({ $0 < time }) ?? true {
            now = time
        }
        if let retryDeadline, let now, retryDeadline <= now {
            self.retryDeadline = nil
            if message == .rateLimited {
                message = nil
            }
        }
    }

    /// Applies the accepted response to the request that was in flight.
    fileprivate mutating func apply(_ result: AuthenticationResult) -> (Login.State, [Login.Effect]) {
        switch result {
        case .success(let tokens):
            password = SecretBytes()
            message = nil
            retryDeadline = nil
            signedInAccount = username
            var effects: [Login.Effect] = [.saveSession(tokens, account: username)]
            if remembersUsername {
                effects.append(.rememberUsername(username))
            }
            return (self, effects)
        case .failure(let failure):
            message = failure.messageKey
            if failure.clearsPassword {
                password = SecretBytes()
            }
            if case .rateLimited(let retryAfter) = failure, retryAfter > .zero, let now {
                retryDeadline = now.advanced(by: retryAfter)
            }
            return (self, [])
        }
    }
}
