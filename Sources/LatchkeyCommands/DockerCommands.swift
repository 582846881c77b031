import Latchkey
import LatchkeyCredentialHelpers

/// `docker-credential-latchkey store|get|erase|list|version`: the tool invoked
/// under that name (a symlink to `latchkey`, as docker runs the helper named by
/// `"credsStore": "latchkey"`). Global options may come before the action, as for
/// `git-credential-latchkey`; the app is `--app`, else `LATCHKEY_APP`, else
/// `docker`. The protocol itself is `DockerCredentialHelper`'s.
///
/// As docker-credential-helpers do, an error is written to standard output
/// (docker shows what it reads there; a miss must read exactly
/// `credentials not found in native keychain`), and also, as for every
/// command, to standard error; the exit status comes from the usual table (1
/// for a miss).
package enum DockerCommands {
    /// The name the tool answers to with this protocol.
    package static let invokedName = "docker-credential-latchkey"

    /// The app namespace when neither `--app` nor `LATCHKEY_APP` names one.
    package static let defaultApp = "docker"

    static func run(_ context: StoreContext, action: String) throws {
        context.output.set("action", .string(action))
        do {
            try perform(action, context)
        } catch let error as LatchkeyError {
            // the error itself is what matters
            if !context.output.json { try? context.output.streams.write(error.message + "\n", to: .output) }
            throw error
        }
    }

    private static func perform(_ action: String, _ context: StoreContext) throws {
        let output = context.output
        switch action {
        case "version":
            try output.line("\(invokedName) (latchkey) \(ToolVersion.current)")
            output.set("latchkey", .string(ToolVersion.current))
            return
        case "store", "get", "erase", "list":
            break
        default:
            throw LatchkeyError(
                .usage, "unknown docker credential action '\(action)': one of store, get, erase, list, version")
        }
        let input =
            action == "list"
            ? SecretBytes() : try context.standardInput(stripOneTrailingNewline: false)
        switch action {
        case "store":
            let credential = try DockerCredential.parse(input)
            let vault = try context.openVault()
            try DockerCredentialHelper(vault: vault).store(credential)
            output.set("stored", .bool(true))
            // On standard error only (docker reads a helper's standard output as its answer), and
            // only a move from the Secret Service: docker expects a helper to be quiet when it succeeds.
            context.noteFallback(vault, wrote: "the docker credential", quietUnlessMoved: true)
        case "get":
            let serverURL = try DockerServerURL(try text(input))
            guard let found = try DockerCredentialHelper(vault: try context.openVault()).get(serverURL) else {
                throw LatchkeyError(.notFound, DockerCredentialHelper.notFoundMessage)
            }
            try output.raw(try found.json(answering: serverURL.original))
            output.set(
                "credential",
                .object([
                    ("ServerURL", .string(serverURL.original)), ("Username", .string(found.username)),
                    ("Secret", .secret(found.secret)),
                ]))
        case "erase":
            let serverURL = try DockerServerURL(try text(input))
            let erased = try DockerCredentialHelper(vault: try context.openVault()).erase(serverURL)
            output.set("erased", .integer(erased))
        default:
            let listed = try DockerCredentialHelper(vault: try context.openVault()).list()
            let map =
                "{"
                + listed.map { JSONText.quoted($0.serverURL) + ":" + JSONText.quoted($0.username) }.joined(
                    separator: ",") + "}\n"
            try output.raw(SecretBytes(utf8: map))
            output.set("credentials", .object(listed.map { ($0.serverURL, .string($0.username)) }))
        }
    }

    /// Input that must be UTF-8 text (a server URL).
    private static func text(_ input: SecretBytes) throws -> String {
        guard let text = input.utf8String() else {
            throw LatchkeyError(.invalidInput, "the server URL is not UTF-8 text")
        }
        return text
    }
}
