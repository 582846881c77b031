import Latchkey
import LatchkeyAgent
import LatchkeySystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `session put NAME --grant` and `session get NAME --refresh-command CMD`:
/// OAuth 2.0 grants on the command line (docs/ROTATION.md).
enum GrantCommands {
    /// How long the refresh command may run before it is stopped (and the refresh is unavailable).
    static let commandDeadline = Duration.seconds(60)
    /// The most a refresh command may write: a token response is a few KiB.
    static let outputLimit = 1 << 20

    /// Stores the token response (RFC 6749 section 5.1) on standard input as one grant.
    static func put(_ context: Context, name: String, account: String) throws {
        let vault = try context.openVault()
        let response = try SecretInput.read(fromDescriptor: 0, context.execution)
        let grant = try Grant(tokenResponse: response)
        let expires = try vault.saveGrant(grant, name: name, account: account)
        let access = grant.accessTokenExpires.map { ", access token expires \(formatTime($0))" } ?? ""
        try context.output.line("saved grant \(TextEscaping.escaped(name))\(access), expires \(formatTime(expires))")
        context.output.set(
            "saved", SessionCommands.info(name: name, account: account, created: nil, expires: expires))
    }

    /// Prints a valid access token, refreshing the grant through `command` when a refresh is due.
    static func get(_ context: Context, name: String, account: String, command: String, noNewline: Bool) throws {
        let vault = try context.openVault()
        // When the refresh command runs in this process (not in a client that runs it for the
        // agent, which holds the signals back itself), SIGINT, SIGTERM and SIGHUP wait from the
        // moment the refresh starts until its grant is saved, then end the command
        // (docs/ROTATION.md, "Interrupting a refresh").
        let deferral = SignalDeferral()
        let deferring = context.execution.client == nil
        let grant = try deferral.settling {
            try vault.validGrant(named: name, account: account, deadline: commandDeadline + .seconds(5)) {
                refreshToken in
                if deferring { deferral.begin() }
                return try refresh(with: command, refreshToken: refreshToken, context.execution)
            }
        }
        guard let grant else { throw SessionCommands.missing(name, account: account) }
        context.output.set(
            "session",
            SessionCommands.info(name: name, account: account, created: nil, expires: grant.accessTokenExpires))
        try context.output.secret(grant.accessToken, key: "secret", newline: !noNewline)
    }

    /// Runs the refresh command with the refresh token alone on its standard
    /// input and classifies what it printed (RFC 6749 sections 5.1 and 5.2). It runs in the
    /// client's process, with its environment, working directory and standard error: inside
    /// the agent, the client is asked to run it (``ClientRefresh``), and a client that does
    /// not answer (it ended, or was killed) leaves the refresh without an answer and the grant kept.
    static func refresh(with command: String, refreshToken: SecretBytes, _ execution: Execution) throws
        -> RefreshOutcome
    {
        let run: RefreshCommandRun
        if let client = execution.client {
            guard let answered = try client.run(refreshToken: refreshToken, deadline: commandDeadline + .seconds(2))
            else { return .unavailable(reason: "the client did not answer for the refresh command") }
            run = answered
        } else {
            run = try runHere(command, refreshToken: refreshToken)
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

    /// Runs the refresh command in this process (`/bin/sh -c`, its own process group, under
    /// ``commandDeadline``), for itself or for the agent that asked.
    /// - Throws: `.invalidInput` when the token or the output is too long; `.io` when it cannot start.
    static func runHere(_ command: String, refreshToken: SecretBytes) throws -> RefreshCommandRun {
        let run = try POSIX.runShellCommand(
            command, input: refreshToken, outputLimit: outputLimit, deadline: commandDeadline)
        return RefreshCommandRun(status: run.status, output: run.output, timedOut: run.timedOut)
    }
}
