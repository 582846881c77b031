import Latchkey
import LatchkeyCommands
import LatchkeyProvider

/// `latchkey unlock`: the pinentry of the agent's Secret Service provider
/// (docs/SECRET-SERVICE-PROVIDER.md, "Unlocking without a desktop").
enum ProviderCommands {
    /// Asks Latchkey's provider on the session bus whether it is locked and which prompts
    /// wait, reads the vault's passphrase (`--passphrase-fd`, `--passphrase-file`, else a
    /// no-echo prompt on the terminal) and hands it to the provider, which opens its vault and
    /// completes the prompts. Already unlocked: says so and reads nothing.
    /// - Throws: `LatchkeyError` `.unavailable` when no Latchkey provider serves the bus,
    ///   `.wrongKey` for a wrong passphrase or none given off a terminal.
    static func unlock(_ context: Context, _ arguments: CommandArguments) throws {
        let client = try ProviderUnlockClient()
        let state = try client.state()
        context.output.set("waiting", .integer(Int64(state.prompts.count)))
        guard state.locked else {
            context.output.set("unlocked", .bool(true))
            context.output.set("completed", .integer(0))
            try context.output.line("the Secret Service provider is unlocked")
            return
        }
        let prompt =
            "Passphrase for the Secret Service provider (\(state.prompts.count) prompt"
            + "\(state.prompts.count == 1 ? "" : "s") waiting): "
        let passphrase: SecretBytes
        if let given = try context.suppliedPassphrase() {
            passphrase = given
        } else if context.execution.inputIsTerminal {
            passphrase = try SecretInput.readFromTerminal(prompt: prompt, context.execution)
        } else {
            throw LatchkeyError(
                .wrongKey,
                "the Secret Service provider's vault needs its passphrase; give it with --passphrase-fd N or "
                    + "--passphrase-file PATH (a 0600 file), or run on a terminal to be asked")
        }
        guard let completed = try client.unlock(passphrase) else {
            throw LatchkeyError(.wrongKey, "wrong passphrase: the Secret Service provider stays locked")
        }
        context.output.set("unlocked", .bool(true))
        context.output.set("completed", .integer(Int64(completed.count)))
        try context.output.line(
            "unlocked the Secret Service provider; completed \(completed.count) prompt\(completed.count == 1 ? "" : "s")"
        )
    }
}
