import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `session put NAME --grant` and `session get NAME --refresh-command CMD`:
/// OAuth 2.0 grants on the command line (docs/ROTATION.md).
package enum GrantCommands {
    /// How long the refresh command may run before it is stopped (and the refresh is unavailable).
    package static let commandDeadline = Duration.seconds(60)
    /// The most a refresh command may write: a token response is a few KiB.
    package static let outputLimit = 1 << 20

    /// Stores the token response (RFC 6749 section 5.1) on standard input as one grant.
    static func put(_ context: StoreContext, name: String, account: String) throws {
        let vault = try context.openVault()
        let response = try context.standardInput()
        let grant = try Grant(tokenResponse: response)
        let expires = try vault.saveGrant(grant, name: name, account: account)
        let access = grant.accessTokenExpires.map { ", access token expires \(formatTime($0))" } ?? ""
        try context.output.line("saved grant \(TextEscaping.escaped(name))\(access), expires \(formatTime(expires))")
        context.output.set(
            "saved", SessionCommands.info(name: name, account: account, created: nil, expires: expires))
    }

    /// Prints a valid access token, refreshing the grant through the refresh command when a
    /// refresh is due; the command runs in the client (``RefreshCommandRunner``), which holds
    /// SIGINT, SIGTERM and SIGHUP back from the moment it starts until this returns
    /// (docs/ROTATION.md, "Interrupting a refresh").
    static func get(_ context: StoreContext, name: String, account: String, noNewline: Bool) throws {
        let vault = try context.openVault()
        let grant = try vault.validGrant(named: name, account: account, deadline: commandDeadline + .seconds(5)) {
            refreshToken in
            try refresh(refreshToken: refreshToken, context.refresh)
        }
        guard let grant else { throw SessionCommands.missing(name, account: account) }
        context.output.set(
            "session",
            SessionCommands.info(name: name, account: account, created: nil, expires: grant.accessTokenExpires))
        try context.output.secret(grant.accessToken, key: "secret", newline: !noNewline)
    }

    /// Has the client run the refresh command with the refresh token alone on its standard
    /// input and classifies what it printed (RFC 6749 sections 5.1 and 5.2). A client that
    /// does not answer (it ended, or was killed) leaves the refresh without an answer and the grant kept.
    static func refresh(refreshToken: SecretBytes, _ runner: (any RefreshCommandRunner)?) throws -> RefreshOutcome {
        guard let runner else {
            throw LatchkeyError(.internal, "a refresh command is due and nobody runs it")
        }
        guard let run = try runner.run(refreshToken: refreshToken, deadline: commandDeadline + .seconds(2)) else {
            return .unavailable(reason: "the client did not answer for the refresh command")
        }
        if run.timedOut {
            return .unavailable(reason: "the refresh command ran for more than \(commandDeadline.components.seconds) s")
        }
        guard run.status == 0 else {
            let ended = run.status.map { "exited with status \($0)" } ?? "was ended by a signal"
            return .unavailable(reason: "the refresh command \(ended)")
        }
        return RefreshOutcome(tokenEndpointAnswer: run.output)
    }
}
