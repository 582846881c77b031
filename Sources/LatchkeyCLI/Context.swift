import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeySystem
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What every command works with: the global options resolved against the
/// environment (app id, policy, store directory, passphrase), and the output,
/// which writes to the run's ``Execution``.
struct Context {
    var globals: GlobalOptions
    let output: Output
    let environment: Environment
    /// What the command runs against: its streams, its input, a passphrase its client gave, the agent's vaults.
    var execution: Execution { output.execution }
    /// Whether the command reads data from standard input (so a passphrase cannot be prompted there).
    var readsStandardInput = false

    /// This context with its output (and so its execution) replaced by `output`.
    func writing(to output: Output) -> Context {
        var context = Context(globals: globals, output: output, environment: environment)
        context.readsStandardInput = readsStandardInput
        context.openedVaults = openedVaults
        return context
    }

    /// The app namespace: `--app`, else `LATCHKEY_APP`, else `default`.
    func appID() throws -> AppID {
        do {
            return try AppID(globals.app ?? environment["LATCHKEY_APP"] ?? "default")
        } catch let error as LatchkeyError {
            throw LatchkeyError(.usage, "--app (or LATCHKEY_APP): \(error.message)")
        }
    }

    /// Reads a file the command line named; a file that is not there is a usage
    /// error naming the option, never "not found" (exit 1, which means a missing credential).
    func fromFileOption<T>(_ option: String, _ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch let error as LatchkeyError where error.code == .notFound {
            throw LatchkeyError(.usage, "\(option): \(error.message)")
        }
    }

    /// The variables the library's ``VaultSettings`` reads, from this command's environment.
    private var settingsEnvironment: [String: String] { environment.subset(VaultSettings.variables) }

    /// The store directory: `--store-dir`, else `LATCHKEY_HOME`, else the XDG default,
    /// resolved as an app resolves it (``VaultSettings``).
    /// - Throws: `LatchkeyError` `.usage` when the one given is not absolute, or
    ///   when there is no default (`HOME` missing or relative), saying which.
    func storeDirectory() throws -> String {
        do {
            let given = try globals.storeDirectory.map { try StoreDirectory.requireAbsolute($0, origin: "--store-dir") }
            return try VaultSettings.storeDirectory(given: given, environment: settingsEnvironment).0
        } catch let error as LatchkeyError where error.code == .invalidInput {
            throw LatchkeyError(.usage, error.message)
        }
    }

    /// The policy in force, resolved as an app resolves it (``VaultSettings``):
    /// `--policy FILE` (or `built-in:NAME`), else `LATCHKEY_POLICY`, else
    /// `$XDG_CONFIG_HOME/latchkey/policy.json` when present, else the built-in default.
    /// - Throws: `LatchkeyError` `.usage` naming the flag or variable for a
    ///   missing file or an unknown built-in name; the policy's own errors.
    func policy() throws -> Policy { try policyAndOrigin().policy }

    /// The policy in force, as ``policy()`` resolves it, and where it came from.
    private func policyAndOrigin() throws -> (policy: Policy, origin: VaultSettings.Origin) {
        let named = namedPolicy
        if let (path, _, origin) = named, path.hasPrefix("built-in:"),
            Policy.builtIn(named: String(path.dropFirst("built-in:".count))) == nil
        {
            throw LatchkeyError(
                .usage,
                "\(origin): there is no built-in policy '\(path.dropFirst("built-in:".count))' (default, strict, shared-device)"
                    + Suggestion.didYouMean(path, among: Tool.builtInPolicies))
        }
        if named == nil {
            do {
                _ = try VaultSettings.userPolicyPath(settingsEnvironment)
            } catch let error as LatchkeyError {
                throw LatchkeyError(.usage, error.message)
            }
        }
        do {
            return try VaultSettings.policy(
                given: globals.policy, labelled: "--policy", default: .default, environment: settingsEnvironment)
        } catch let error as LatchkeyError where error.code == .notFound {
            throw LatchkeyError(.usage, error.message)
        }
    }

    /// The policy named on the command line or in the environment: `--policy`,
    /// else `LATCHKEY_POLICY` when set and not empty, with where it came from.
    private var namedPolicy: (path: String, source: SettingSource, origin: String)? {
        if let path = globals.policy { return (path, .flag, "--policy") }
        if let path = environment["LATCHKEY_POLICY"], !path.isEmpty { return (path, .environment, "LATCHKEY_POLICY") }
        return nil
    }

    /// The store `--backend` or `LATCHKEY_BACKEND` chooses, or nil for the policy's `backend.kind`.
    /// - Throws: `LatchkeyError` `.usage` for a `LATCHKEY_BACKEND` that names no store.
    func backendChoice() throws -> Policy.BackendChoice? {
        if globals.backend == nil, let text = environment["LATCHKEY_BACKEND"], !text.isEmpty {
            _ = try GlobalOptions.backendChoice(text, from: "LATCHKEY_BACKEND")
        }
        return try VaultSettings.backend(given: globals.backend, environment: settingsEnvironment).0
    }

    /// Where the app id, the policy, the backend choice and the store directory
    /// came from, for `status`.
    /// - Parameters:
    ///   - policy: The policy in force.
    ///   - storeDirectory: The store directory in use.
    /// - Returns: The four settings.
    /// - Throws: `LatchkeyError` `.usage` for a `LATCHKEY_BACKEND` that names no store.
    func settings(policy: Policy, storeDirectory directory: String) throws -> Settings {
        let app =
            globals.app.map { Setting(value: $0, source: .flag, origin: "--app") }
            ?? environment["LATCHKEY_APP"].map { Setting(value: $0, source: .environment, origin: "LATCHKEY_APP") }
            ?? Setting(value: "default", source: .builtInDefault, origin: nil)
        let builtIn = policy.source.hasPrefix("built-in:")
        let fromPolicy: (SettingSource, String?) =
            builtIn ? (.builtInDefault, policy.source) : (.policyFile, policy.source)
        let named = namedPolicy
        let policySetting = Setting(
            value: policy.name, source: named?.source ?? fromPolicy.0, origin: named?.origin ?? fromPolicy.1)
        let backend: Setting
        if let choice = globals.backend {
            backend = Setting(value: choice.rawValue, source: .flag, origin: "--backend")
        } else if let choice = try backendChoice() {
            backend = Setting(value: choice.rawValue, source: .environment, origin: "LATCHKEY_BACKEND")
        } else {
            backend = Setting(
                value: policy.backend.rawValue, source: fromPolicy.0, origin: fromPolicy.1.map { "\($0): backend.kind" }
            )
        }
        let store =
            globals.storeDirectory.map { _ in Setting(value: directory, source: .flag, origin: "--store-dir") }
            ?? (environment["LATCHKEY_HOME"]?.isEmpty == false
                ? Setting(value: directory, source: .environment, origin: "LATCHKEY_HOME") : nil)
            ?? Setting(value: directory, source: .builtInDefault, origin: nil)
        return Settings(app: app, policy: policySetting, backend: backend, storeDirectory: store)
    }

    /// The namespace this command works in, resolved here from the options and this process's
    /// environment, as the agent receives it (``ResolvedNamespace``).
    /// - Throws: As ``appID()``, ``storeDirectory()``, ``policy()`` and ``backendChoice()``;
    ///   `.usage` for a relative policy path (which only this process can read).
    func resolvedNamespace() throws -> ResolvedNamespace {
        let app = try appID()
        let directory = try storeDirectory()
        let reference: String
        switch try policyAndOrigin().origin {
        case .userFile(let path): reference = path
        case .fallback: reference = Tool.builtInPolicies[0]
        default:
            let named = namedPolicy?.path ?? Tool.builtInPolicies[0]
            guard named.hasPrefix("/") || named.hasPrefix("built-in:") else {
                throw LatchkeyError(.usage, "\(namedPolicy?.origin ?? "--policy") names a relative path")
            }
            reference = named
        }
        return ResolvedNamespace(
            storeDirectory: directory, app: app.rawValue, policy: reference, backend: try backendChoice()?.rawValue,
            sessionUnlock: Policy.SecretServiceUnlock.sessionDefault(
                environment: environment.subset(Environment.graphicalSession)
            ).rawValue)
    }

    /// The Secret Service unlock mode in force and why: the policy's
    /// `secretService.unlock`, else `prompt` in a graphical session of this
    /// command (`DISPLAY` or `WAYLAND_DISPLAY`; the agent gets the client's), else `never`.
    func unlockMode(_ policy: Policy) -> (mode: Policy.SecretServiceUnlock, why: String) {
        if let chosen = policy.secretServiceUnlock { return (chosen, "policy secretService.unlock") }
        let mode = Policy.SecretServiceUnlock.sessionDefault(
            environment: environment.subset(Environment.graphicalSession))
        return (mode, mode == .prompt ? "a graphical session is present" : "no graphical session")
    }

    /// Opens the vault. A passphrase is read only when the policy protects the
    /// file with one: from `--passphrase-fd` or `--passphrase-file`, else from
    /// a no-echo prompt when standard input is a terminal and the file is the store in use.
    /// Inside the agent it is the namespace's vault from the agent's pool (``VaultSource``),
    /// opened with the passphrase the client sent, else the one the pool holds; when it has
    /// none, the client is told to ask and send it.
    /// - Parameter unlocking: Whether a locked Secret Service collection may be unlocked through
    ///   the provider's prompt, as ``unlockMode(_:)`` says; false opens it under `never`, for a
    ///   command that reports and never asks (`status`).
    /// - Throws: `LatchkeyError` `.wrongKey` saying how to give a passphrase when one is needed and missing.
    func openVault(unlocking: Bool = true) throws -> Vault {
        let policy = try policy()
        let appID = try appID()
        let backend = try backendChoice()
        let storeDirectory = try storeDirectory()
        let needsPassphrase = policy.fileKeySource == .passphrase
        execution.report.withLock { $0.serviceDeadline = .milliseconds(Int64(policy.secretServiceTimeout * 1000)) }
        if let failure = execution.failFast, (backend ?? policy.backend) != .file {
            // Inside the agent, moments after this namespace's Secret Service missed a deadline.
            execution.report.withLock { $0.failedFast = true }
            throw failure
        }
        let given = needsPassphrase ? try suppliedPassphrase() : nil
        let prompt = Self.passphrasePrompt(appID)
        if let vaults = execution.vaults {
            // Inside the agent: the namespace's vault from its pool, opened with the passphrase
            // the client sent, else the one the pool holds for that vault.
            do {
                return opened(try vaults.vault(for: try resolvedNamespace(), passphrase: given, unlocking: unlocking))
            } catch let error as LatchkeyError where error.code == .wrongKey && needsPassphrase && given == nil {
                // The agent holds no passphrase (or one that no longer opens the vault): the client asks for it.
                execution.passphraseNeeded.withLock { $0 = prompt }
                throw error
            }
        }
        func open(_ passphrase: SecretBytes?) throws -> Vault {
            try Vault.open(
                appID: appID, policy: policy, storeDirectory: storeDirectory, backend: backend, passphrase: passphrase,
                unlock: unlocking ? unlockMode(policy).mode : .never)
        }
        do {
            return opened(try open(given))
        } catch let error as LatchkeyError where error.code == .wrongKey && needsPassphrase && given == nil {
            guard execution.inputIsTerminal && !readsStandardInput else {
                throw LatchkeyError(
                    .wrongKey,
                    error.message
                        + "; give it with --passphrase-fd N or --passphrase-file PATH (a 0600 file), or run on a terminal to be asked"
                )
            }
            let typed = try SecretInput.readFromTerminal(prompt: prompt, execution)
            return opened(try open(typed))
        }
    }

    /// Says on standard error (and in `--json` as `storedIn`) that a write went to the
    /// encrypted file because the Secret Service could not be used (never a silent
    /// downgrade): every time, or for a credential helper (`quietUnlessMoved`, since git and
    /// docker expect a helper to print nothing when it succeeds) only when the write moved
    /// the namespace's credentials from the Secret Service to the file
    /// (``Vault/claimMoveFromSecretService()``). `status` says where they are, every time.
    /// - Parameters:
    ///   - vault: The vault written to.
    ///   - what: What was written, such as `session access`.
    ///   - quietUnlessMoved: Whether to be quiet when the namespace was not in the Secret Service before.
    func noteFallback(_ vault: Vault, wrote what: String, quietUnlessMoved: Bool = false) {
        guard let reason = vault.openReport.secretServiceUnavailable else { return }
        output.set(
            "storedIn",
            .object([
                ("backend", .string("file")), ("path", .string(vault.fileVaultPath)),
                ("secretServiceUnavailable", .string(reason)),
            ]))
        let moved: Bool
        do {
            moved = try vault.claimMoveFromSecretService()
        } catch {
            moved = true // when it cannot be told, the write is told of as a move
        }
        guard moved || !quietUnlessMoved else { return }
        let path = vault.fileVaultPath.map { TextEscaping.escaped($0) } ?? "the encrypted file"
        let before = moved ? ", where this namespace's credentials were kept until now" : ""
        output.message(
            "latchkey: \(what) was written to the encrypted file \(path), not the Secret Service\(before): \(reason)")
    }

    /// The prompt that asks for the passphrase of `appID`'s vault.
    static func passphrasePrompt(_ appID: AppID) -> String { "Passphrase for \(appID): " }

    /// The passphrase given for this command: sent by the client (or read by it
    /// before it ran the command in-process), else from `--passphrase-fd` or `--passphrase-file`.
    /// Inside the agent only the client's counts: the options name the client's descriptors and files.
    func suppliedPassphrase() throws -> SecretBytes? {
        if let passphrase = execution.passphrase { return passphrase }
        if execution.isInAgent { return nil }
        if let descriptor = globals.passphraseDescriptor {
            if descriptor == 0 && readsStandardInput {
                throw LatchkeyError(
                    .usage, "this command reads standard input, so the passphrase cannot come from --passphrase-fd 0")
            }
            return try SecretInput.read(fromDescriptor: descriptor, execution)
        }
        guard let path = globals.passphraseFile else { return nil }
        return try fromFileOption("--passphrase-file") { try SecretInput.read(fromFile: path) }
    }

    /// The vaults this run opened, so `runTool` can show their audit warnings at the end;
    /// they are released with the run.
    var openedVaults = OpenedVaults()

    private func opened(_ vault: Vault) -> Vault {
        openedVaults.vaults.withLock { $0.append(vault) }
        return vault
    }
}

/// The vaults one run of a command opened (each run has its own: the agent runs
/// several at once).
final class OpenedVaults: Sendable {
    let vaults = Mutex<[Vault]>([])

    /// Lets go of the vaults once the command has run.
    func finish() {
        vaults.withLock { $0.removeAll() }
    }
}
