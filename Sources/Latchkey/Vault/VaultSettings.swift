/// The policy, backend choice and store directory a vault opens with, resolved
/// as the `latchkey` command resolves its own, so that an app and
/// `latchkey --app <its id>` apply the same rules to the same namespace.
///
/// Each setting is taken from the first of these that gives it:
/// - the policy: what the app gives (its equivalent of `--policy`: a file path
///   or `built-in:NAME`), else `LATCHKEY_POLICY`, else the user's
///   `$XDG_CONFIG_HOME/latchkey/policy.json` (`~/.config/latchkey/policy.json`)
///   when it exists, else the app's default;
/// - the backend choice: what the app gives, else `LATCHKEY_BACKEND`, else nil
///   (the policy's `backend.kind`);
/// - the store directory: what the app gives, else `LATCHKEY_HOME`, else
///   ``Vault/defaultStoreDirectory(environment:)``.
///
/// An empty variable counts as unset. Open the vault with what it resolved:
/// `Vault.open(appID:policy:storeDirectory:backend:passphrase:unlock:)` with
/// ``policy``, ``storeDirectory`` and ``backend``.
public struct VaultSettings: Sendable {
    /// Where a setting came from.
    public enum Origin: Sendable, Equatable {
        /// Given by the app (the command line's flag).
        case given
        /// The environment variable named.
        case environment(String)
        /// The user's policy file at this path.
        case userFile(String)
        /// The app's default (for the backend choice, the policy's `backend.kind`).
        case fallback
    }

    /// The policy in force.
    public let policy: Policy
    /// Where ``policy`` came from.
    public let policyOrigin: Origin
    /// The backend choice, or nil for the policy's `backend.kind`.
    public let backend: Policy.BackendChoice?
    /// Where ``backend`` came from.
    public let backendOrigin: Origin
    /// The store directory, an absolute path.
    public let storeDirectory: String
    /// Where ``storeDirectory`` came from.
    public let storeDirectoryOrigin: Origin

    /// The variables resolution reads.
    package static let variables = [
        "LATCHKEY_POLICY", "LATCHKEY_BACKEND", "LATCHKEY_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME",
    ]

    /// Resolves the settings.
    /// - Parameters:
    ///   - policy: The app's own choice of policy, a file path or `built-in:NAME`; nil to
    ///     look further.
    ///   - backend: The app's own backend choice; nil to look further.
    ///   - storeDirectory: The app's own store directory, an absolute path; nil to look further.
    ///   - defaultPolicy: The policy when nothing else names one.
    ///   - environment: The environment to read; the process's when nil.
    /// - Throws: `LatchkeyError`: `.notFound` naming where a named policy file came
    ///   from when it does not exist; `.invalidInput` for an unknown built-in policy, a
    ///   `LATCHKEY_BACKEND` that names no store, a relative store directory, or a variable
    ///   that is not valid UTF-8, each naming its origin; a policy file's own errors.
    public init(
        policy: String? = nil, backend: Policy.BackendChoice? = nil, storeDirectory: String? = nil,
        defaultPolicy: Policy = .default, environment: [String: String]? = nil
    ) throws {
        let environment = try environment ?? StoreDirectory.processEnvironment(Self.variables)
        (self.policy, policyOrigin) = try Self.policy(given: policy, default: defaultPolicy, environment: environment)
        (self.backend, backendOrigin) = try Self.backend(given: backend, environment: environment)
        (self.storeDirectory, storeDirectoryOrigin) = try Self.storeDirectory(
            given: storeDirectory, environment: environment)
    }

    /// `name`'s value in `environment`, nil when it is unset or empty.
    private static func variable(_ name: String, in environment: [String: String]) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The policy: `given` (a path or `built-in:NAME`), else `LATCHKEY_POLICY`, else the
    /// user's file when it exists, else `defaultPolicy`.
    /// - Throws: As ``init(policy:backend:storeDirectory:defaultPolicy:environment:)`` for the policy.
    /// `givenLabel` names `given` in messages (the command line's `--policy`).
    package static func policy(
        given: String?, labelled givenLabel: String = "the policy given", default defaultPolicy: Policy,
        environment: [String: String]
    ) throws -> (Policy, Origin) {
        let named =
            given.map { ($0, Origin.given, givenLabel) }
            ?? variable("LATCHKEY_POLICY", in: environment).map {
                ($0, Origin.environment("LATCHKEY_POLICY"), "LATCHKEY_POLICY")
            }
        if let (path, origin, label) = named {
            if path.hasPrefix("built-in:") {
                let name = String(path.dropFirst("built-in:".count))
                guard let policy = Policy.builtIn(named: name) else {
                    throw LatchkeyError(
                        .invalidInput,
                        "\(label): there is no built-in policy '\(name)' (default, strict, shared-device)")
                }
                return (policy, origin)
            }
            do {
                return (try Policy(contentsOfFile: path), origin)
            } catch let error as LatchkeyError where error.code == .notFound {
                throw LatchkeyError(.notFound, "\(label): \(error.message)")
            }
        }
        guard let path = try userPolicyPath(environment) else { return (defaultPolicy, .fallback) }
        do {
            return (try Policy(contentsOfFile: path), .userFile(path))
        } catch let error as LatchkeyError where error.code == .notFound {
            return (defaultPolicy, .fallback)
        }
    }

    /// The backend choice: `given`, else `LATCHKEY_BACKEND`, else nil.
    /// - Throws: `LatchkeyError` `.invalidInput` for a `LATCHKEY_BACKEND` that names no store.
    package static func backend(given: Policy.BackendChoice?, environment: [String: String]) throws
        -> (Policy.BackendChoice?, Origin)
    {
        if let given { return (given, .given) }
        guard let text = variable("LATCHKEY_BACKEND", in: environment) else { return (nil, .fallback) }
        guard let choice = Policy.BackendChoice(rawValue: text) else {
            let choices = Policy.BackendChoice.allCases.map(\.rawValue).joined(separator: ", ")
            throw LatchkeyError(.invalidInput, "LATCHKEY_BACKEND must be \(choices), not '\(text)'")
        }
        return (choice, .environment("LATCHKEY_BACKEND"))
    }

    /// The store directory: `given`, else `LATCHKEY_HOME`, else the XDG default.
    /// - Throws: `LatchkeyError` `.invalidInput` for a relative one, or when there is no default.
    package static func storeDirectory(given: String?, environment: [String: String]) throws -> (String, Origin) {
        if let given { return (try StoreDirectory.requireAbsolute(given, origin: "the store directory"), .given) }
        if let home = variable("LATCHKEY_HOME", in: environment) {
            return (try StoreDirectory.requireAbsolute(home, origin: "LATCHKEY_HOME"), .environment("LATCHKEY_HOME"))
        }
        return (try StoreDirectory.standard(environment: environment), .fallback)
    }

    /// `$XDG_CONFIG_HOME/latchkey/policy.json` when that is absolute (a relative
    /// one is ignored, as the XDG rule says), else `$HOME/.config/latchkey/policy.json`;
    /// nil when `HOME` is not set.
    /// - Throws: `LatchkeyError` `.invalidInput` when `HOME` is relative.
    package static func userPolicyPath(_ environment: [String: String]) throws -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/latchkey/policy.json"
        }
        guard environment["HOME"]?.isEmpty == false else { return nil }
        return try StoreDirectory.home(environment, instead: "XDG_CONFIG_HOME", purpose: "user policy file")
            + "/.config/latchkey/policy.json"
    }
}
