/// Runs the login screen: feeds events to ``Login/reduce(_:_:)``, keeps the
/// state, and performs the effects against an ``Authenticator`` and a
/// ``LoginCredentialStore``.
///
/// The UI calls ``appear()`` when the screen shows, ``send(_:)`` for every
/// user action, and renders what arrives through the output handler. Login
/// requests run in their own tasks; a cancelled or stale request's answer is
/// ignored by the reducer. While rate-limited, the controller sends
/// ``Login/Event/tick(now:)`` every `tickInterval` until the limit ends.
///
/// Times come from the clock given at creation (the continuous clock unless a
/// test or a preview injects another). When the session of a successful login
/// cannot be saved, the controller reports the store failure and also sends
/// ``Login/Event/sessionSaveFailed(account:)``, so the screen can say so.
public actor LoginController {
    private let authenticator: any Authenticator
    private let store: any LoginCredentialStore
    private let tickInterval: Duration
    private let output: @Sendable (LoginControllerOutput) -> Void
    private let now: @Sendable () -> ContinuousClock.Instant
    private let sleep: @Sendable (Duration) async throws -> Void
    private var requests: [Int: Task<Void, Never>] = [:]
    private var countdown: Task<Void, Never>?
    /// The effects of the latest event with effects; the next event's wait for them.
    private var effectQueue: Task<Void, Never>?

    /// The current state of the screen.
    public private(set) var state: Login.State

    /// Creates a controller.
    /// - Parameters:
    ///   - authenticator: Sends login attempts to the server.
    ///   - store: Keeps the remembered username, the remember choice and sessions.
    ///   - configuration: The app's additions to the rules.
    ///   - tickInterval: How often the rate-limit countdown advances.
    ///   - clock: Where response times and countdown ticks come from, and what
    ///     the countdown sleeps on; its instants are the continuous clock's, so
    ///     a test clock can start from `ContinuousClock.now` and move by hand.
    ///   - output: Receives every new state, focus request and store failure;
    ///     called on the controller's executor, so hop to the UI's own.
    public init<C: Clock>(
        authenticator: any Authenticator,
        store: any LoginCredentialStore,
        configuration: Login.Configuration = Login.Configuration(),
        tickInterval: Duration = .seconds(1),
        clock: C = ContinuousClock(),
        output: @escaping @Sendable (LoginControllerOutput) -> Void = { _ in }
    ) where C.Instant == ContinuousClock.Instant {
        precondition(tickInterval > .zero, "tickInterval must be positive")
        self.authenticator = authenticator
        self.store = store
        self.tickInterval = tickInterval
        self.now = { clock.now }
        self.sleep = { try await clock.sleep(for: $0) }
        self.output = output
        self.state = Login.State(configuration: configuration)
    }

    /// Loads the remembered username and the remember choice, then sends
    /// ``Login/Event/appeared(rememberedUsername:remembersUsername:)``.
    ///
    /// When the store cannot answer, the failure goes to the output and the
    /// screen appears empty with remembering shown off.
    public func appear() async {
        var remembered: String?
        var remembers = false
        do {
            remembers = try await store.isUsernameMemoryAllowed()
            remembered = remembers ? try await store.lastUsername() : nil
        } catch {
            output(.storeFailed(LoginStoreFailure(operation: .load, error: error)))
        }
        await send(.appeared(rememberedUsername: remembered, remembersUsername: remembers))
    }

    /// Feeds one event to the reducer, publishes the new state and runs the effects.
    ///
    /// Effects run in the order of their events, each event's after the
    /// previous event's are done, even when a store call suspends: a logout
    /// the user asks for while the session of the login before it is still
    /// being saved wipes that session, not the other way round. Returns when
    /// this event's effects are done.
    /// - Parameter event: What happened.
    public func send(_ event: Login.Event) async {
        let effects = apply(event)
        if !effects.isEmpty {
            let previous = effectQueue
            let work = Task {
                await previous?.value
                for effect in effects {
                    await self.run(effect)
                }
            }
            effectQueue = work
            await work.value
        }
        startCountdownIfNeeded()
    }

    /// Reduces `event` into the state and publishes it.
    /// - Returns: The effects to run.
    private func apply(_ event: Login.Event) -> [Login.Effect] {
        let (next, effects) = Login.reduce(state, event)
        state = next
        output(.render(next))
        return effects
    }

    /// Waits until no login request is running (an answer counts as running
    /// until its effects, such as saving the session, are done) and no
    /// countdown is, for tests.
    public func settle() async {
        while true {
            if let request = requests.values.first {
                await request.value
            } else if let countdown {
                await countdown.value
            } else {
                return
            }
        }
    }

    /// Stops the countdown, then waits until the answer of every request has
    /// been handled, its effects included, so an app can quit without losing
    /// a session or a remembered username that was being saved. Send
    /// ``Login/Event/disappeared`` first to abandon a request still in flight.
    public func shutDown() async {
        countdown?.cancel()
        await settle()
    }

    private func run(_ effect: Login.Effect) async {
        switch effect {
        case .sendLoginRequest(let request):
            let authenticator = authenticator
            requests[request.generation] = Task {
                let result = await authenticator.authenticate(username: request.username, password: request.password)
                await self.finish(request.generation, result)
            }
        case .cancelLoginRequest(let generation):
            requests[generation]?.cancel()
        case .rememberUsername(let username):
            await perform(.rememberUsername) { try await $0.rememberUsername(username) }
        case .setUsernameMemoryAllowed(let remembers):
            await perform(.setUsernameMemoryAllowed) { try await $0.setUsernameMemoryAllowed(remembers) }
        case .saveSession(let tokens, let account):
            let saved = await perform(.saveSession) { try await $0.saveSession(tokens, account: account) }
            if !saved {
                // Already inside the effect queue: the event's own effects (none,
                // by the reducer's rules) run here rather than queue behind this one.
                for effect in apply(.sessionSaveFailed(account: account)) {
                    await run(effect)
                }
            }
        case .logout(let account):
            await perform(.logout) { try await $0.logout(account: account) }
        case .focus(let field):
            output(.focus(field))
        }
    }

    /// Runs one store call; a failure goes to the output.
    /// - Returns: Whether the call succeeded.
    @discardableResult
    private func perform(
        _ operation: LoginStoreFailure.Operation,
        _ call: (any LoginCredentialStore) async throws -> Void
    ) async -> Bool {
        do {
            try await call(store)
            return true
        } catch {
            output(.storeFailed(LoginStoreFailure(operation: operation, error: error)))
            return false
        }
    }

    private func finish(_ generation: Int, _ result: AuthenticationResult) async {
        await send(.responseReceived(generation: generation, result: result, at: now()))
        // Only now: until its effects are done, the request is still running for settle().
        requests[generation] = nil
    }

    private func startCountdownIfNeeded() {
        guard state.isRateLimited, countdown == nil else { return }
        let interval = tickInterval
        let sleep = sleep
        let now = now
        countdown = Task {
            while self.state.isRateLimited {
                do {
                    try await sleep(interval)
                } catch {
                    break // Cancelled: nobody waits for the countdown any more.
                }
                await self.send(.tick(now: now()))
            }
            self.countdown = nil
        }
    }
}
