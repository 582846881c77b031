import Latchkey

extension LatchkeyError {
    /// The error as the command line reports it. The library's messages name the
    /// `Vault` call that repairs a state; the command line adds the command that makes it.
    package var withCommandLineRemedy: LatchkeyError {
        guard message.contains(AuditTrail.resetAdvice) else { return withoutLibSecretCall }
        return LatchkeyError(
            code, message + "; on the command line, `latchkey audit reset --yes` does that",
            cFunction: withoutLibSecretCall.cFunction, errnoCode: errnoCode)
    }

    /// The error without the name of the libsecret call that met it: which call meets a
    /// hung or locked service depends on whether the process already holds a connection
    /// (the agent does, a new process does not), and the two modes say the same.
    private var withoutLibSecretCall: LatchkeyError {
        guard let cFunction, cFunction.hasPrefix("secret_") else { return self }
        return LatchkeyError(code, message, cFunction: nil, errnoCode: errnoCode)
    }
}
