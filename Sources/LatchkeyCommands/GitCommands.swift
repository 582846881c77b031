import Latchkey
import LatchkeyCredentialHelpers

/// `git-credential get|store|erase`, also run when the tool is invoked as
/// `git-credential-latchkey`: git's input on standard input, the answer on
/// standard output. The protocol itself is `GitCredentialHelper`'s.
enum GitCommands {
    static func run(_ context: StoreContext, action: String) throws {
        context.output.set("action", .string(action))
        guard ["get", "store", "erase"].contains(action) else {
            // The protocol asks helpers to ignore actions they do not know, so a newer git keeps working.
            context.output.set("ignored", .bool(true))
            return
        }
        let message = try GitCredentialMessage.parse(
            context.standardInput(stripOneTrailingNewline: false))
        let vault = try context.openVault()
        let helper = GitCredentialHelper(vault: vault)
        switch action {
        case "get":
            let found = try helper.get(message)
            guard context.output.json else {
                if let found { try context.output.raw(found.serialized()) }
                return
            }
            context.output.set(
                "credential",
                found.map { found in
                    .object([
                        ("username", .string(found.username)),
                        ("password", found.password.map { .secret($0) } ?? .null),
                        (
                            "password_expiry_utc",
                            found.passwordExpiry.map { .integer(Int64($0.timeIntervalSince1970)) } ?? .null
                        ),
                        ("oauth_refresh_token", found.oauthRefreshToken.map { .secret($0) } ?? .null),
                    ])
                } ?? .null)
        case "store":
            // git expects a helper to be quiet when it succeeds: only a move from the Secret Service is told.
            if try helper.store(message) {
                context.noteFallback(vault, wrote: "the git credential", quietUnlessMoved: true)
            }
        default:
            let erased = try helper.erase(message)
            context.output.set("erased", .integer(erased))
        }
    }
}
