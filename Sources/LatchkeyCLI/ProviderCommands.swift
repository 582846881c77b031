import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeyProvider
import LatchkeySystem

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

    /// `latchkey agent enable-secret-service`: writes the systemd user unit and the D-Bus
    /// activation file that start `latchkey agent run --secret-service` (this executable) when a
    /// client asks for `org.freedesktop.secrets`, unless another provider owns or can be activated
    /// for the name (asked within the policy's Secret Service deadline) or a file not Latchkey's is in the way.
    /// An agent that runs and does not serve the bus is stopped (it would keep the one the bus
    /// starts from serving its socket); every agent started from then on serves the bus.
    /// - Throws: `LatchkeyError` `.cannotCreate` naming the other provider or file (nothing written).
    static func enable(_ context: Context, _ arguments: CommandArguments) throws {
        let deadline = Duration.milliseconds(Int64(try context.policy().secretServiceTimeout * 1000))
        let (paths, found) = try SecretServiceActivation.enable(
            executable: try POSIX.executablePath(), timeout: deadline)
        // A running agent whose provider does not own the name (started before) would keep the one
        // the bus starts from serving: it is stopped, so the next agent serves the bus.
        let runtime = try? AgentRuntimeDirectory(runtimeDirectory: context.environment["XDG_RUNTIME_DIR"])
        let stopped =
            found?.kind != .latchkey && runtime.flatMap { AgentCommands.ask(.stop, $0, context.execution) } != nil
        context.output.set("stoppedAgent", .bool(stopped))
        context.output.set("unit", .string(paths.unit))
        context.output.set("activationFile", .string(paths.activation))
        try context.output.line("wrote \(TextEscaping.escaped(paths.unit))")
        try context.output.line("wrote \(TextEscaping.escaped(paths.activation))")
        if stopped {
            try context.output.line("stopped the running agent, which did not serve the Secret Service")
        }
        try context.output.line(
            "the session bus now starts Latchkey's Secret Service provider when a client asks for org.freedesktop.secrets "
                + "(under systemd: run `systemctl --user daemon-reload` once)")
    }

    /// `latchkey agent disable-secret-service`: removes the unit and the activation file where they
    /// are Latchkey's own; a provider that runs goes on until its agent stops (`latchkey agent stop`).
    static func disable(_ context: Context, _ arguments: CommandArguments) throws {
        let removed = try SecretServiceActivation.disable()
        context.output.set("removed", .array(removed.map { .string($0) }))
        if removed.isEmpty { try context.output.line("no unit or activation file of Latchkey's was there") }
        for path in removed { try context.output.line("removed \(TextEscaping.escaped(path))") }
    }
}
