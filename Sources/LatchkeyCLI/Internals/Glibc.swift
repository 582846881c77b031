internal import Glibc
import Latchkey

// Every C call of the command line itself: its arguments, its standard
// descriptors, and the terminal a prompt switches echo off on. Failures become
// `LatchkeyError`s through the library's one errno conversion (`POSIX.check`,
// `POSIX.valueOrErrno`, which also retries EINTR).

extension POSIX {
    /// The process's arguments (`argv`), the tool's name first: each decoded
    /// from UTF-8, with whether its bytes were valid UTF-8 (where they were not,
    /// the text holds U+FFFD in their place and must not be used).
    static func commandLineArguments() -> [(text: String, isUTF8: Bool)] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return ("", true) }
            if let text = String(validatingCString: argument) { return (text, true) }
            return (String(cString: argument), false)
        }
    }

    /// Opens `/dev/null` on each of the standard descriptors 0, 1 and 2 that is
    /// closed (`fcntl(F_GETFD)` fails with `EBADF`), so that no socket or file the
    /// process opens later lands on one and receives what is meant for the stream.
    /// Descriptor 0 is opened write-only and 1 and 2 read-only, so reading or
    /// writing the stream still fails with `EBADF`, as it would have closed.
    static func openClosedStandardDescriptors() {
        for descriptor: Int32 in 0...2 {
            guard case .failure(let failure) = valueOrErrno({ fcntl(descriptor, F_GETFD) }), failure.code == EBADF
            else { continue }
            guard
                case .success(let null) = valueOrErrno({
                    Glibc.open("/dev/null", descriptor == 0 ? O_WRONLY : O_RDONLY)
                })
            else { continue }
            if null != descriptor {
                _ = valueOrErrno { dup2(null, descriptor) }
                close(null)
            }
        }
    }

    /// Whether `descriptor` is a terminal (`isatty`).
    static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// Reads one line (its newline not kept) from the terminal on `descriptor` into
    /// zeroing memory, with echo switched off (`tcgetattr`/`tcsetattr`) while reading
    /// and restored after, writing `prompt` to standard error once echo is off.
    /// - Returns: the bytes, and whether input ended before any byte was read.
    /// - Throws: `.invalidInput` when the input exceeds `limit`; `.io` on a read failure.
    static func readSecretLineWithoutEcho(
        from descriptor: Int32, limit: Int, prompt: String
    ) throws -> (secret: SecretBytes, atEnd: Bool) {
        var saved = termios()
        let restoreEcho = tcgetattr(descriptor, &saved) == 0
        if restoreEcho {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            try check("tcsetattr", path: "terminal") { tcsetattr(descriptor, TCSAFLUSH, &quiet) }
        }
        defer { if restoreEcho { _ = tcsetattr(descriptor, TCSAFLUSH, &saved) } }
        // The prompt comes only once echo is off, so nothing typed after it is ever shown.
        try write(prompt, toDescriptor: 2, name: "standard error")
        return try readSecret(from: descriptor, limit: limit, untilEnd: false)
    }
}
