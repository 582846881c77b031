import Latchkey

/// Where a store command gets its open vault: in the client's own process, a vault opened for
/// the command; in the agent, the namespace's vault from its pool, kept open between commands.
/// It asks nobody for anything: a vault that needs a passphrase that was not given is refused
/// with `.wrongKey`, and the run gives back the prompt for its client to ask with.
package protocol VaultSource: Sendable {
    /// The vault of `namespace`, open, for one command.
    /// - Parameters:
    ///   - namespace: The namespace, as the client resolved it.
    ///   - passphrase: The passphrase the client gave for this command (read from
    ///     `--passphrase-fd`, `--passphrase-file` or its terminal), if any.
    ///   - unlocking: Whether a locked Secret Service collection may be unlocked through the
    ///     provider's prompt; false for a command that reports and never asks (`status`).
    /// - Returns: The open vault.
    /// - Throws: `LatchkeyError` `.wrongKey` when the vault needs a passphrase that was not
    ///   given and is not held (the client then asks for it and sends the command again);
    ///   the errors of opening it.
    func vault(for namespace: ResolvedNamespace, passphrase: SecretBytes?, unlocking: Bool) throws -> Vault
}
