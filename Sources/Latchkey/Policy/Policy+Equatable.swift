extension Policy: Equatable {
    /// Compares every rule; ``Policy/source`` (where the policy was read from) is ignored.
    public static func == (lhs: Policy, rhs: Policy) -> Bool {
        var right = rhs
        right.source = lhs.source
        return lhs.isIdentical(to: right)
    }

    private func isIdentical(to other: Policy) -> Bool {
        version == other.version && name == other.name && source == other.source
            && remembersUsernames == other.remembersUsernames && sessionMaxAge == other.sessionMaxAge
            && wipesSessionsOnExit == other.wipesSessionsOnExit
            && sessionsOnLogout == other.sessionsOnLogout && usernameOnLogout == other.usernameOnLogout
            && secretMaxAge == other.secretMaxAge && secretsOnLogout == other.secretsOnLogout
            && backend == other.backend && allowsFileFallback == other.allowsFileFallback
            && migratesToSecretService == other.migratesToSecretService
            && secretServiceTimeout == other.secretServiceTimeout
            && secretServiceUnlock == other.secretServiceUnlock
            && secretServiceUnlockTimeout == other.secretServiceUnlockTimeout
            && fileKeySource == other.fileKeySource && kdf == other.kdf && audit == other.audit
            && agent == other.agent
    }
}
