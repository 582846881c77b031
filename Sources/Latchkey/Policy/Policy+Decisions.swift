#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Policy {
    /// Whether a username may be remembered now.
    ///
    /// A policy that forbids remembering wins over the user's setting (its
    /// reason is the one given); the user's opt-out wins over a policy that allows.
    /// - Parameter userOptedOut: Whether the user turned remembering off.
    /// - Returns: ``PolicyDecision/allow`` or a denial naming the rule.
    package func rememberUsernameDecision(userOptedOut: Bool) -> PolicyDecision {
        .all(of: [
            remembersUsernames
                ? .allow : .deny(reason: "policy '\(name)' forbids remembering usernames (username.remember)"),
            userOptedOut ? .deny(reason: "the user turned off remembering the username") : .allow,
        ])
    }

    /// Whether the encrypted file may be used because the Secret Service cannot.
    /// - Parameter reason: Why the Secret Service cannot be used (such as "no session bus"),
    ///   repeated in a denial.
    /// - Returns: ``PolicyDecision/allow`` or a denial naming the rule.
    package func fileFallbackDecision(reason: String) -> PolicyDecision {
        switch backend {
        case .file:
            return .allow
        case .secretService:
            return .deny(
                reason:
                    "policy '\(name)' requires the Secret Service (backend.kind \"secret-service\"), which is unavailable: \(reason)"
            )
        case .auto:
            return allowsFileFallback
                ? .allow
                : .deny(
                    reason:
                        "policy '\(name)' forbids the encrypted-file fallback (backend.allowFileFallback false); the Secret Service is unavailable: \(reason)"
                )
        }
    }

    /// Whether a file vault may be moved into the Secret Service without being asked.
    /// - Returns: ``PolicyDecision/allow`` or a denial naming the rule.
    package func automaticMigrationDecision() -> PolicyDecision {
        migratesToSecretService
            ? .allow
            : .deny(
                reason:
                    "policy '\(name)' does not migrate to the Secret Service automatically (backend.migrateToSecretService)"
            )
    }

    /// When a session saved at `created` expires: the requested expiry, capped at
    /// ``sessionMaxAge`` after `created` (the cap when none is requested).
    /// - Parameters:
    ///   - requested: The expiry the app asked for, if any.
    ///   - created: When the session is saved.
    /// - Returns: The expiry to store.
    package func sessionExpiry(requested: Date?, created: Date) -> Date {
        let cap = created.addingTimeInterval(sessionMaxAge)
        guard let requested else { return cap }
        return min(requested, cap)
    }

    /// The expiry a named secret gets: the one requested, capped by
    /// ``secretMaxAge`` when the policy sets one; nil (no limit) when neither does.
    /// - Parameters:
    ///   - requested: The expiry the app asked for, if any.
    ///   - created: When the secret is saved.
    /// - Returns: The expiry to store.
    package func secretExpiry(requested: Date?, created: Date) -> Date? {
        guard let secretMaxAge else { return requested }
        let cap = created.addingTimeInterval(secretMaxAge)
        return requested.map { min($0, cap) } ?? cap
    }
}
