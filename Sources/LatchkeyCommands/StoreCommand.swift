import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A command that uses a store, as the client parsed it from its command line, once: what it
/// is and its typed arguments. The same value runs in the client's own process or is sent to
/// the agent (docs/AGENT.md, field `command`), which never sees the command line. It carries
/// no secret: standard input and a passphrase travel beside it.
package enum StoreCommand: Codable, Hashable, Sendable {
    /// `status`, with where the settings it reports came from.
    case status(SettingOrigins)
    /// `username get`.
    case usernameGet
    /// `username set NAME`.
    case usernameSet(name: String)
    /// `username forget`.
    case usernameForget
    /// `remember on`.
    case rememberOn
    /// `remember off`.
    case rememberOff
    /// `remember show`.
    case rememberShow
    /// `session put NAME [--account A] [--expires-in SECONDS | --grant]`.
    case sessionPut(name: String, account: String, expiresIn: Int64?, grant: Bool)
    /// `session get NAME [--account A] [--no-newline] [--refresh-command CMD]`.
    case sessionGet(name: String, account: String, noNewline: Bool, refreshCommand: String?)
    /// `session list [--account A]` (nil: every account).
    case sessionList(account: String?)
    /// `session delete NAME [--account A]`.
    case sessionDelete(name: String, account: String)
    /// `secret put NAME [--from-file PATH]` (an absolute path).
    case secretPut(name: String, fromFile: String?)
    /// `secret get NAME [--no-newline]`.
    case secretGet(name: String, noNewline: Bool)
    /// `secret list`.
    case secretList
    /// `secret delete NAME`.
    case secretDelete(name: String)
    /// `logout [--account A]` (nil: every account).
    case logout(account: String?)
    /// `wipe`, confirmed with `--yes` (or on the client's terminal) or not.
    case wipe(confirmed: Bool)
    /// `migrate`.
    case migrate
    /// `audit show [--since SEQ]`.
    case auditShow(since: UInt64?)
    /// `audit verify`.
    case auditVerify
    /// `audit reset`, confirmed with `--yes` (or on the client's terminal) or not.
    case auditReset(confirmed: Bool)
    /// `git-credential ACTION` (git's input on standard input).
    case gitCredential(action: String)
    /// `docker-credential ACTION` (docker's input on standard input).
    case dockerCredential(action: String)

    /// Whether it changes nothing in the store, so running it again after a lost answer is safe.
    package var readsOnly: Bool {
        switch self {
        case .status, .usernameGet, .rememberShow, .sessionGet, .sessionList, .secretGet, .secretList, .auditShow,
            .auditVerify:
            return true
        case .gitCredential(let action): return action == "get"
        case .dockerCredential(let action): return ["get", "list"].contains(action)
        default: return false
        }
    }

    /// Whether it reads its standard input.
    package var readsStandardInput: Bool {
        switch self {
        case .sessionPut: return true
        case .secretPut(_, let fromFile): return fromFile == nil
        case .gitCredential(let action): return ["get", "store", "erase"].contains(action)
        case .dockerCredential(let action): return ["store", "get", "erase"].contains(action)
        default: return false
        }
    }
}

/// Where the settings `status` reports came from, as the client found them (a flag, an
/// environment variable, or nil: the policy or the built-in default).
package struct SettingOrigins: Codable, Hashable, Sendable {
    /// A setting given on the command line or in the environment.
    package struct Origin: Codable, Hashable, Sendable {
        /// Whether a flag gave it (else an environment variable).
        package var isFlag: Bool
        /// The flag or variable, such as `--app` or `LATCHKEY_APP`.
        package var name: String

        /// An origin of these parts.
        package init(isFlag: Bool, name: String) {
            self.isFlag = isFlag
            self.name = name
        }
    }

    /// The app id's.
    package var app: Origin?
    /// The policy's (nil: the user's policy file or the built-in default).
    package var policy: Origin?
    /// The backend choice's (nil: the policy's `backend.kind`).
    package var backend: Origin?
    /// The store directory's (nil: the XDG default).
    package var storeDirectory: Origin?

    /// Origins of these parts.
    package init(app: Origin?, policy: Origin?, backend: Origin?, storeDirectory: Origin?) {
        self.app = app
        self.policy = policy
        self.backend = backend
        self.storeDirectory = storeDirectory
    }
}

/// What the client sends the agent to run (docs/AGENT.md, field `command`): the command and
/// how its output is shaped. The namespace, standard input and passphrase travel beside it.
package struct StoreRequest: Codable, Hashable, Sendable {
    /// The command.
    package var command: StoreCommand
    /// Whether the output is one JSON document (`--json`).
    package var json: Bool

    /// A request of these parts.
    package init(command: StoreCommand, json: Bool) {
        self.command = command
        self.json = json
    }

    /// The request as the wire carries it (JSON, UTF-8).
    /// - Throws: `.internal` when it cannot be encoded.
    package func encoded() throws -> SecretBytes {
        do {
            return SecretBytes(try JSONEncoder().encode(self))
        } catch {
            throw LatchkeyError(.internal, "the command cannot be encoded: \(error)")
        }
    }

    /// The request the wire carries.
    /// - Throws: `.invalidInput` when `bytes` is not one.
    package init(decoding bytes: SecretBytes) throws {
        do {
            self = try bytes.withUnsafeBytes { try JSONDecoder().decode(StoreRequest.self, from: Data($0)) }
        } catch {
            throw LatchkeyError(.invalidInput, "a run request's command is not one")
        }
    }
}
