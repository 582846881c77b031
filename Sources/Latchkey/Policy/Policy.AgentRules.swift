#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Policy {
    /// How the per-user agent (`latchkey agent`) is run and how long it keeps an
    /// unlocked passphrase-protected file vault (`agent`). The command line's own
    /// rules, read from the policy file; not part of the library's public API.
    package struct AgentRules: Sendable, Equatable {
        /// Whether the command line starts an agent when none runs (`agent.autostart`).
        package internal(set) var autostarts: Bool
        /// How long a passphrase-protected file vault opened through the agent
        /// stays unlocked in it, in seconds (`agent.unlockCacheSeconds`); 0 keeps nothing.
        package internal(set) var unlockCacheDuration: TimeInterval
        /// How long the agent waits without a request before it exits, in
        /// seconds (`agent.idleExitSeconds`).
        package internal(set) var idleTimeout: TimeInterval
        /// Whether clients of the agent's Secret Service provider may create collections beyond
        /// `default` and `session` (`agent.secretServiceClientCollections`).
        package internal(set) var allowsClientCollections: Bool
        /// Whether every agent, however started (the one a command starts too), serves the Secret
        /// Service on the session bus as `latchkey agent run --secret-service` does, when no other
        /// provider owns or can be activated for `org.freedesktop.secrets` (`agent.serveSecretService`).
        package internal(set) var servesSecretService: Bool

        /// The rules used when `agent` is absent: start automatically, keep an
        /// unlocked vault 15 minutes, exit after 10 idle minutes.
        package static let standard = AgentRules(autostarts: true, unlockCacheDuration: 900, idleTimeout: 600)

        /// Creates agent rules.
        /// - Parameters:
        ///   - autostarts: Whether the command line starts an agent when none runs.
        ///   - unlockCacheDuration: How long an unlocked vault stays unlocked in the agent, in seconds; 0 keeps nothing.
        ///   - idleTimeout: How long the agent waits without a request before it exits, in seconds.
        ///   - allowsClientCollections: Whether Secret Service clients may create collections of their own.
        ///   - servesSecretService: Whether every agent serves the Secret Service.
        package init(
            autostarts: Bool, unlockCacheDuration: TimeInterval, idleTimeout: TimeInterval,
            allowsClientCollections: Bool = true, servesSecretService: Bool = false
        ) {
            self.autostarts = autostarts
            self.unlockCacheDuration = unlockCacheDuration
            self.idleTimeout = idleTimeout
            self.allowsClientCollections = allowsClientCollections
            self.servesSecretService = servesSecretService
        }
    }
}
