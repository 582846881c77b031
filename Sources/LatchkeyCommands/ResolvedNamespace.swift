import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The namespace a store command works in, resolved in the client from its options and its
/// environment (`--store-dir`, `--app`, `--policy`, `--backend`, their variables, the user's
/// policy file and the graphical session), so the agent never reads the client's environment
/// to find it: the store directory (absolute), the app id, the policy (an absolute path or
/// `built-in:NAME`), the backend choice and the Secret Service unlock mode.
///
/// It is a value the client sends with its request (docs/AGENT.md, field `namespace`); the
/// agent keys its namespace queues on it.
package struct ResolvedNamespace: Codable, Hashable, Sendable {
    /// The store directory, an absolute path.
    package var storeDirectory: String
    /// The app id.
    package var app: String
    /// The policy: an absolute path, or `built-in:NAME` (the built-in default when no policy
    /// is named and the user has no policy file).
    package var policy: String
    /// The store `--backend` or `LATCHKEY_BACKEND` chose (`auto`, `secret-service`, `file`);
    /// nil: the policy's `backend.kind`.
    package var backend: String?
    /// The Secret Service unlock mode when the policy sets none: `prompt` in the client's
    /// graphical session, else `never`.
    package var sessionUnlock: String

    /// A namespace of these parts.
    package init(storeDirectory: String, app: String, policy: String, backend: String?, sessionUnlock: String) {
        self.storeDirectory = storeDirectory
        self.app = app
        self.policy = policy
        self.backend = backend
        self.sessionUnlock = sessionUnlock
    }

    /// The namespace's queue in the agent: one per store directory and app, whatever the
    /// policy and backend (one writer per namespace's files and items).
    package var queueKey: String { storeDirectory + "\u{0}" + app }

    /// The namespace as the wire carries it (JSON, UTF-8).
    /// - Throws: `.internal` when it cannot be encoded.
    package func encoded() throws -> SecretBytes {
        do {
            return SecretBytes(try JSONEncoder().encode(self))
        } catch {
            throw LatchkeyError(.internal, "the namespace cannot be encoded: \(error)")
        }
    }

    /// The namespace the wire carries.
    /// - Throws: `.invalidInput` when `bytes` is not one, or names a relative store directory or policy path.
    package init(decoding bytes: SecretBytes) throws {
        let decoded: ResolvedNamespace
        do {
            decoded = try bytes.withUnsafeBytes { try JSONDecoder().decode(ResolvedNamespace.self, from: Data($0)) }
        } catch {
            throw LatchkeyError(.invalidInput, "a run request's namespace is not one")
        }
        guard decoded.storeDirectory.hasPrefix("/"),
            decoded.policy.hasPrefix("/") || decoded.policy.hasPrefix("built-in:")
        else {
            throw LatchkeyError(.invalidInput, "a run request's namespace names a relative path")
        }
        self = decoded
    }
}
