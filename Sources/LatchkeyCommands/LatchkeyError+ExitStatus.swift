import Latchkey

extension LatchkeyError.Code {
    /// The command line's own code, for a command line it cannot understand (exit 64).
    /// The library never throws it: codes are extensible, and this one is the tool's.
    package static let usage = LatchkeyError.Code(rawValue: "usage")

    /// The one table from error codes to the `latchkey` command's exit statuses, wherever a
    /// command runs (in its own process or in the agent)
    /// (the values of BSD's `sysexits.h`).
    ///
    /// | status | meaning |
    /// |---|---|
    /// | 0 | success |
    /// | 1 | not found |
    /// | 64 | usage error |
    /// | 65 | tampered or malformed input |
    /// | 69 | unavailable |
    /// | 70 | internal error |
    /// | 73 | cannot create |
    /// | 74 | I/O error |
    /// | 75 | locked, timed out, or a refresh that could not reach the authorization server (the grant is kept) |
    /// | 77 | wrong key, insecure permissions, policy denied or refresh rejected (the session ended) |
    package static let exitStatusTable: [LatchkeyError.Code: Int32] = [
        .notFound: 1,
        .usage: 64,
        .tampered: 65,
        .invalidInput: 65,
        .unavailable: 69,
        .internal: 70,
        .cannotCreate: 73,
        .io: 74,
        .locked: 75,
        .timedOut: 75,
        .refreshUnavailable: 75,
        .wrongKey: 77,
        .insecurePermissions: 77,
        .policyDenied: 77,
        .refreshRejected: 77,
    ]

    /// The exit status the `latchkey` command reports for this code; 70 for a code it does not know.
    package var exitStatus: Int32 { Self.exitStatusTable[self] ?? 70 }
}
