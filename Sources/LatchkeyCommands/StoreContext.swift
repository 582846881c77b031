import Latchkey
import Synchronization

/// What a store command works with, passed to it explicitly (there is no ambient state): the
/// namespace its client resolved, what its client read for it, where it gets its vaults, who
/// runs a refresh command, and its output, which it returns as a value.
final class StoreContext {
    /// The run, as the client prepared it.
    let run: StoreRun
    /// Where its output goes.
    let output: Output
    /// Where it gets its vaults.
    let vaults: any VaultSource
    /// Who runs a refresh command it needs.
    let refresh: (any RefreshCommandRunner)?
    /// The vaults it opened, whose audit warnings are shown at its end; released with it.
    let openedVaults = OpenedVaults()
    /// Standard input, until the command takes it.
    private let input: Mutex<Result<SecretBytes, LatchkeyError>?>

    init(_ run: StoreRun, output: Output, vaults: any VaultSource, refresh: (any RefreshCommandRunner)?) {
        self.run = run
        self.output = output
        self.vaults = vaults
        self.refresh = refresh
        input = Mutex(run.standardInput)
    }

    /// The namespace.
    /// - Throws: The error its client met resolving it.
    func namespace() throws -> ResolvedNamespace { try run.namespace.get() }

    /// The app namespace.
    /// - Throws: `LatchkeyError` `.usage` naming `--app` for an app id that is not one; the
    ///   error the client met resolving the namespace.
    func appID() throws -> AppID {
        let app = try namespace().app
        do {
            return try AppID(app)
        } catch let error as LatchkeyError {
            throw LatchkeyError(.usage, "--app (or LATCHKEY_APP): \(error.message)")
        }
    }

    /// The store `--backend` or `LATCHKEY_BACKEND` chose, or nil for the policy's `backend.kind`.
    func backendChoice() throws -> Policy.BackendChoice? {
        try namespace().backend.flatMap(Policy.BackendChoice.init(rawValue:))
    }

    /// The policy in force: the one the client resolved (a path or `built-in:NAME`), read again.
    /// - Throws: `LatchkeyError` `.usage` naming `--policy` for a file that is gone; the policy's own errors.
    func policy() throws -> Policy {
        do {
            return try VaultSettings.policy(
                given: try namespace().policy, labelled: "--policy", default: .default, environment: [:]
            ).0
        } catch let error as LatchkeyError where error.code == .notFound {
            throw LatchkeyError(.usage, error.message)
        }
    }

    /// Standard input, taken once (later calls get it empty), one trailing newline stripped
    /// unless `stripOneTrailingNewline` is false.
    /// - Throws: The error its client met reading it; `.invalidInput` when the command was
    ///   given none (a command that does not read standard input).
    func standardInput(stripOneTrailingNewline: Bool = true) throws -> SecretBytes {
        let taken = input.withLock { input in
            defer { if input != nil { input = .success(SecretBytes()) } }
            return input
        }
        guard let taken else { throw LatchkeyError(.internal, "the command was given no standard input") }
        let bytes = try taken.get()
        return stripOneTrailingNewline ? SecretFile.droppingOneTrailingNewline(bytes) : bytes
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

    /// The Secret Service unlock mode in force and why: the policy's `secretService.unlock`,
    /// else `prompt` in the client's graphical session (`DISPLAY` or `WAYLAND_DISPLAY`), else `never`.
    func unlockMode(_ policy: Policy) -> (mode: Policy.SecretServiceUnlock, why: String) {
        if let chosen = policy.secretServiceUnlock { return (chosen, "policy secretService.unlock") }
        let mode =
            (try? namespace()).flatMap { Policy.SecretServiceUnlock(rawValue: $0.sessionUnlock) } ?? .never
        return (mode, mode == .prompt ? "a graphical session is present" : "no graphical session")
    }

    /// Opens the vault, from the run's ``VaultSource``, with the passphrase the client gave.
    /// When it needs one that was not given, the client is told to ask for it
    /// (``PassphraseNeeded``), or, when nobody can be asked, the error says how to give one.
    /// - Parameter unlocking: Whether a locked Secret Service collection may be unlocked through
    ///   the provider's prompt, as ``unlockMode(_:)`` says; false opens it under `never`, for a
    ///   command that reports and never asks (`status`).
    /// - Throws: `LatchkeyError` `.wrongKey` saying how to give a passphrase when one is needed
    ///   and missing; the errors the client met resolving the namespace or reading the passphrase.
    func openVault(unlocking: Bool = true) throws -> Vault {
        let namespace = try namespace()
        let passphrase = try run.passphrase?.get()
        do {
            let vault = try vaults.vault(for: namespace, passphrase: passphrase, unlocking: unlocking)
            openedVaults.vaults.withLock { $0.append(vault) }
            return vault
        } catch let error as LatchkeyError where error.code == .wrongKey && passphrase == nil {
            guard try policy().fileKeySource == .passphrase else { throw error }
            guard let remedy = run.passphraseRemedy else {
                throw PassphraseNeeded(error: error, prompt: StoreCommandRunner.passphrasePrompt(try appID()))
            }
            throw LatchkeyError(.wrongKey, error.message + remedy)
        }
    }

    /// The app id, the policy, the backend choice and the store directory, and where they
    /// came from, for `status`.
    /// - Parameters:
    ///   - policy: The policy in force.
    ///   - storeDirectory: The store directory in use.
    ///   - origins: Where the client found them.
    /// - Returns: The four settings.
    func settings(policy: Policy, storeDirectory directory: String, origins: SettingOrigins) throws -> Settings {
        func setting(_ value: String, _ origin: SettingOrigins.Origin) -> Setting {
            Setting(value: value, source: origin.isFlag ? .flag : .environment, origin: origin.name)
        }
        let namespace = try namespace()
        let app =
            origins.app.map { setting(namespace.app, $0) }
            ?? Setting(value: "default", source: .builtInDefault, origin: nil)
        let builtIn = policy.source.hasPrefix("built-in:")
        let fromPolicy: (SettingSource, String?) =
            builtIn ? (.builtInDefault, policy.source) : (.policyFile, policy.source)
        let policySetting = Setting(
            value: policy.name, source: origins.policy.map { $0.isFlag ? .flag : .environment } ?? fromPolicy.0,
            origin: origins.policy?.name ?? fromPolicy.1)
        let backend: Setting
        if let origin = origins.backend, let choice = try backendChoice() {
            backend = setting(choice.rawValue, origin)
        } else {
            backend = Setting(
                value: policy.backend.rawValue, source: fromPolicy.0, origin: fromPolicy.1.map { "\($0): backend.kind" }
            )
        }
        let store =
            origins.storeDirectory.map { setting(directory, $0) }
            ?? Setting(value: directory, source: .builtInDefault, origin: nil)
        return Settings(app: app, policy: policySetting, backend: backend, storeDirectory: store)
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
}

/// The vaults one run of a command opened (each run has its own: the agent runs several at once).
final class OpenedVaults: Sendable {
    let vaults = Mutex<[Vault]>([])
    /// Lets go of the vaults.
    func finish() {
        vaults.withLock { $0.removeAll() }
    }
}

/// Secrets read from files and input: their size limit and their trailing newline.
package enum SecretFile {
    /// The largest secret accepted, so a wrong file cannot exhaust memory.
    package static let maximumLength = 1 << 20

    /// Reads a secret from a file, which must be a private (0600) regular file
    /// of this user. One trailing newline is dropped.
    /// - Parameter path: The file.
    /// - Returns: The secret.
    /// - Throws: `LatchkeyError` `.notFound`, `.insecurePermissions` naming the
    ///   path, `.invalidInput` when too long, `.io`.
    package static func read(atPath path: String) throws -> SecretBytes {
        droppingOneTrailingNewline(try PrivateFiles.readSecret(atPath: path, limit: maximumLength))
    }

    /// `secret` without one final `\n`, as shells and editors add.
    package static func droppingOneTrailingNewline(_ secret: SecretBytes) -> SecretBytes {
        secret.withUnsafeBytes { bytes in
            bytes.last == UInt8(ascii: "\n") ? SecretBytes(UnsafeRawBufferPointer(rebasing: bytes.dropLast())) : secret
        }
    }
}
