import Latchkey

extension Login {
    /// Everything the login screen shows, and what it needs to decide the next step.
    ///
    /// Only ``reduce(_:_:)`` changes a state. Whether submit is possible
    /// (``canSubmit``), whether progress shows and whether the fields are
    /// enabled are derived on every read, never stored, so they cannot go stale
    /// when a field changes by code rather than by keystroke.
    ///
    /// `description`, `debugDescription` and `dump` never show the password.
    /// Two states are equal when everything the screen shows and the reducer
    /// keeps is equal; the configuration is not compared (a function has no equality).
    public struct State: Sendable {
        /// The app's additions to the rules (the input validator).
        public let configuration: Configuration
        /// Whether the screen is on display.
        public internal(set) var isVisible: Bool
        /// The username field's text.
        public internal(set) var username: String
        /// The password field's content.
        public internal(set) var password: SecretBytes
        /// Whether the username is remembered after a successful login (the
        /// screen's remember toggle; off means the user opted out).
        public internal(set) var remembersUsername: Bool
        /// The generation id of the request in flight, if one is.
        public internal(set) var pendingGeneration: Int?
        /// The generation id of the latest request sent (0 before the first).
        public internal(set) var lastGeneration: Int
        /// The inline message to show, if any.
        public internal(set) var message: MessageKey?
        /// The account that logged in successfully and has not logged out.
        public internal(set) var signedInAccount: String?
        /// The latest time an event reported; nil until one did.
        public internal(set) var now: ContinuousClock.Instant?
        /// When the server accepts the next attempt, while rate-limited.
        public internal(set) var retryDeadline: ContinuousClock.Instant?

        /// Creates a state from its parts; with the defaults, the state of a
        /// screen that has not appeared yet: empty fields, nothing in flight,
        /// submit impossible.
        ///
        /// Drivers start from the defaults and let ``Login/reduce(_:_:)`` do
        /// the rest; the other parameters let a UI preview or a test show any
        /// state the reducer can reach without replaying events.
        /// - Parameters:
        ///   - configuration: The app's additions to the rules.
        ///   - isVisible: Whether the screen is on display.
        ///   - username: The username field's text.
        ///   - password: The password field's content.
        ///   - remembersUsername: The remember toggle.
        ///   - pendingGeneration: The generation id of the request in flight, if one is;
        ///     requires `isVisible`.
        ///   - lastGeneration: The generation id of the latest request sent; defaults to
        ///     `pendingGeneration`, or 0. Equals `pendingGeneration` when that is set.
        ///   - message: The inline message; ``MessageKey/sessionNotSaved`` requires
        ///     `signedInAccount`.
        ///   - signedInAccount: The account signed in, if any.
        ///   - now: The latest time an event reported.
        ///   - retryDeadline: When a rate limit ends; requires `now`.
        ///
        /// A combination the reducer never produces (a request in flight on a
        /// hidden screen, a request in flight that is not the latest, a rate
        /// limit without a clock) is a programmer error and stops the program.
        public init(
            configuration: Configuration = Configuration(),
            isVisible: Bool = false,
            username: String = "",
            password: SecretBytes = SecretBytes(),
            remembersUsername: Bool = false,
            pendingGeneration: Int? = nil,
            lastGeneration: Int? = nil,
            message: MessageKey? = nil,
            signedInAccount: String? = nil,
            now: ContinuousClock.Instant? = nil,
            retryDeadline: ContinuousClock.Instant? = nil
        ) {
            let last = lastGeneration ?? pendingGeneration ?? 0
            precondition(last >= 0, "generation ids are not negative")
            precondition(pendingGeneration.map { $0 == last } ?? true, "the request in flight is the latest sent")
            precondition(pendingGeneration == nil || isVisible, "a request is in flight only while the screen shows")
            precondition(retryDeadline == nil || now != nil, "a rate limit needs the time it started from")
            precondition(
                message != .sessionNotSaved || signedInAccount != nil, "sessionNotSaved is shown only while signed in")
            self.configuration = configuration
            self.isVisible = isVisible
            self.username = username
            self.password = password
            self.remembersUsername = remembersUsername
            self.pendingGeneration = pendingGeneration
            self.lastGeneration = last
            self.message = message
            self.signedInAccount = signedInAccount
            self.now = now
            self.retryDeadline = retryDeadline
        }

        /// Whether a request is in flight.
        public var isInFlight: Bool { pendingGeneration != nil }

        /// Whether the progress indicator shows: exactly while a request is in flight.
        public var showsProgress: Bool { isInFlight }

        /// Whether the fields and the remember toggle accept input: exactly
        /// while no request is in flight.
        public var fieldsEnabled: Bool { !isInFlight }

        /// Whether the server asked to wait before the next attempt.
        public var isRateLimited: Bool { retryDeadline != nil }

        /// How long until the next attempt is allowed, while rate-limited.
        public var retryRemaining: Duration? {
            guard let retryDeadline else { return nil }
            guard let now else { return nil }
            return max(.zero, now.duration(to: retryDeadline))
        }

        /// Whether the input makes sense: both fields non-empty and accepted
        /// by the configuration's validator.
        public var inputIsValid: Bool {
            !username.isEmpty && !password.isEmpty && configuration.validator(username, password)
        }

        /// Whether submitting is possible now; derived on every read.
        ///
        /// True only while the screen shows, no request is in flight, no rate
        /// limit holds, nobody is logged in, and the input is valid.
        public var canSubmit: Bool {
            isVisible && !isInFlight && !isRateLimited && signedInAccount == nil && inputIsValid
        }

        /// Whether user edits are taken: the screen shows and nothing is in flight.
        var acceptsInput: Bool { isVisible && fieldsEnabled }
    }
}
