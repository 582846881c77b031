extension Policy {
    /// Whether a locked Secret Service collection is unlocked through the
    /// provider's own prompt (`secretService.unlock`).
    ///
    /// Latchkey never draws a dialog and never asks for the keyring password:
    /// with ``prompt`` it asks the provider to unlock (libsecret's unlock call),
    /// and the provider shows its own dialog, or none (KWallet unlocks a wallet
    /// that is already open without one).
    public enum SecretServiceUnlock: String, Sendable, CaseIterable {
        /// A locked collection is reported as `locked` (exit 75) at once.
        case never
        /// A locked collection is unlocked through the provider's prompt, which
        /// may wait for a person up to ``Policy/secretServiceUnlockTimeout``.
        case prompt

        /// The mode used when neither the policy nor the app chose one: ``prompt``
        /// in a graphical session (`DISPLAY` or `WAYLAND_DISPLAY` set and not
        /// empty), ``never`` otherwise.
        /// - Parameter environment: The process environment to look at.
        public static func sessionDefault(environment: [String: String]) -> SecretServiceUnlock {
            let graphical = ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
            return graphical ? .prompt : .never
        }
    }
}
