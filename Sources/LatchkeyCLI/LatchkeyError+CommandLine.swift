import Latchkey

extension LatchkeyError {
    /// The error as the command line reports it. The library's messages name the
    /// `Vault` call that repairs a state; the command line adds the command that makes it.
    var withCommandLineRemedy: LatchkeyError {
        guard message.contains(AuditTrail.resetAdvice) else { return self }
        return LatchkeyError(
            code, message + "; on the command line, `latchkey audit reset --yes` does that", cFunction: cFunction,
            errnoCode: errnoCode)
    }
}
