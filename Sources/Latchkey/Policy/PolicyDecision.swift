/// A policy's answer to one question: go ahead, or do not, and why.
///
/// Decisions are values so that a `Vault` can combine them, audit a denial
/// with its reason, and turn it into an error only where the operation must stop.
public enum PolicyDecision: Sendable, Equatable, Codable {
    /// The operation may go ahead.
    case allow
    /// The operation may not go ahead.
    /// - Parameter reason: Why, in plain words, naming the rule (never a secret).
    case deny(reason: String)

    /// Whether the decision is ``allow``.
    public var isAllowed: Bool { self == .allow }

    /// The reason of a denial; nil for ``allow``.
    public var reason: String? {
        if case .deny(let reason) = self { return reason }
        return nil
    }

    /// Allows only when every decision allows; otherwise the first denial, in order.
    /// An empty list allows.
    /// - Parameter decisions: The decisions, most important first.
    /// - Returns: ``allow``, or the first ``deny(reason:)``.
    package static func all(of decisions: [PolicyDecision]) -> PolicyDecision {
        decisions.first { !$0.isAllowed } ?? .allow
    }

    /// Allows when at least one decision allows; otherwise a denial that joins
    /// every reason with "; ". An empty list denies.
    /// - Parameter decisions: The alternatives.
    /// - Returns: ``allow``, or a ``deny(reason:)`` with all the reasons.
    package static func any(of decisions: [PolicyDecision]) -> PolicyDecision {
        if decisions.contains(.allow) { return .allow }
        let reasons = decisions.compactMap(\.reason)
        return .deny(reason: reasons.isEmpty ? "no alternative allows it" : reasons.joined(separator: "; "))
    }

    /// This decision combined with `other`: ``allow`` only when both allow; a
    /// denial here wins (and `other` is not evaluated).
    /// - Parameter other: The next decision.
    /// - Returns: The combined decision.
    package func and(_ other: @autoclosure () -> PolicyDecision) -> PolicyDecision {
        isAllowed ? other() : self
    }

    /// Returns normally when the decision allows, and throws otherwise.
    /// - Throws: `LatchkeyError` `.policyDenied` with the denial's reason.
    package func requireAllowed() throws {
        if case .deny(let reason) = self { throw LatchkeyError(.policyDenied, reason) }
    }
}
