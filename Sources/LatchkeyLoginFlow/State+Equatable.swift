extension Login.State: Equatable {
    /// Whether two states show the same screen and lead to the same next steps.
    ///
    /// Every stored property is compared (the password in constant time),
    /// and so is ``canSubmit``. The configuration's validator is a function,
    /// which has no equality: two states equal here render the same now, and
    /// behave the same later when they share a configuration, as the states of
    /// one screen do.
    /// - Parameters:
    ///   - lhs: A state.
    ///   - rhs: Another state.
    /// - Returns: True when the two states are equal.
    public static func == (lhs: Login.State, rhs: Login.State) -> Bool {
        lhs.isVisible == rhs.isVisible
            && lhs.username == rhs.username
            && lhs.password == rhs.password
            && lhs.remembersUsername == rhs.remembersUsername
            && lhs.pendingGeneration == rhs.pendingGeneration
            && lhs.lastGeneration == rhs.lastGeneration
            && lhs.message == rhs.message
            && lhs.signedInAccount == rhs.signedInAccount
            && lhs.now == rhs.now
            && lhs.retryDeadline == rhs.retryDeadline
            && lhs.canSubmit == rhs.canSubmit
    }
}
