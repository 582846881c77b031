import Latchkey
import LatchkeyCommands

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What every command works with: the global options resolved against the
/// environment (app id, policy, store directory, passphrase), and the output,
/// which writes to this process's ``Execution``.
struct Context {
    var globals: GlobalOptions
    let output: Output
    let environment: Environment
    /// This process's streams, and whether its standard input is a terminal.
    let execution: Execution
    /// Whether the command reads data from standard input (so a passphrase cannot be prompted there).
    var readsStandardInput = false

    /// A context of these parts; its output written to `execution`.
    init(globals: GlobalOptions, execution: Execution, environment: Environment) {
        self.globals = globals
        self.execution = execution
        self.environment = environment
        output = Output(json: globals.json, streams: execution)
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

    /// Where the app id, the policy, the backend choice and the store directory were given:
    /// a flag, an environment variable, or neither (the policy or the built-in default), as
    /// `status` reports them wherever it runs.
    func settingOrigins() -> SettingOrigins {
        func given(_ flag: String?, _ flagName: String, _ variable: String) -> SettingOrigins.Origin? {
            if flag != nil { return SettingOrigins.Origin(isFlag: true, name: flagName) }
            if environment[variable]?.isEmpty == false { return SettingOrigins.Origin(isFlag: false, name: variable) }
            return nil
        }
        let app =
            globals.app != nil
            ? SettingOrigins.Origin(isFlag: true, name: "--app")
            : environment["LATCHKEY_APP"].map { _ in SettingOrigins.Origin(isFlag: false, name: "LATCHKEY_APP") }
        return SettingOrigins(
            app: app, policy: namedPolicy.map { SettingOrigins.Origin(isFlag: $0.source == .flag, name: $0.origin) },
            backend: given(globals.backend?.rawValue, "--backend", "LATCHKEY_BACKEND"),
            storeDirectory: given(globals.storeDirectory, "--store-dir", "LATCHKEY_HOME"))
    }

    /// The namespace this command works in, resolved here from the options and this process's
    /// environment, as the agent receives it (``ResolvedNamespace``).
    /// - Parameter relativePolicy: Whether a relative policy path is kept as it is given (for a
    ///   command run in this process, whose working directory it is relative to).
    /// - Throws: As ``appID()``, ``storeDirectory()``, ``policy()`` and ``backendChoice()``;
    ///   `.usage` for a relative policy path (which only this process can read) unless `relativePolicy`.
    func resolvedNamespace(relativePolicy: Bool = false) throws -> ResolvedNamespace {
        let app = try appID()
        let directory = try storeDirectory()
        let reference: String
        switch try policyAndOrigin().origin {
        case .userFile(let path): reference = path
        case .fallback: reference = Tool.builtInPolicies[0]
        default:
            let named = namedPolicy?.path ?? Tool.builtInPolicies[0]
            guard relativePolicy || named.hasPrefix("/") || named.hasPrefix("built-in:") else {
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

    /// The passphrase given for this command with `--passphrase-fd` or `--passphrase-file`, if any.
    func suppliedPassphrase() throws -> SecretBytes? {
        if let descriptor = globals.passphraseDescriptor {
            if descriptor == 0 && readsStandardInput {
                throw LatchkeyError(
                    .usage, "this command reads standard input, so the passphrase cannot come from --passphrase-fd 0")
            }
            return try SecretInput.read(fromDescriptor: descriptor)
        }
        guard let path = globals.passphraseFile else { return nil }
        return try fromFileOption("--passphrase-file") { try SecretInput.read(fromFile: path) }
    }
}
