internal import CLatchkeyLinux
import Dispatch
internal import Glibc
import Latchkey
import LatchkeyAgent
import Synchronization

// Every C call of the command line itself: its arguments, its standard
// descriptors, the terminal a prompt switches echo off on, and the refresh
// command `session get --refresh-command` runs. Failures become
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

extension POSIX {
    /// What a command run by ``runShellCommand(_:input:outputLimit:deadline:)`` did.
    struct ShellCommandResult {
        /// Its exit status; nil when a signal ended it.
        var status: Int32?
        /// What it wrote to standard output, in zeroing memory.
        var output: SecretBytes
        /// Whether it was stopped for running past its deadline.
        var timedOut: Bool
    }

    /// Runs `/bin/sh -c command` (`posix_spawn`) in a process group of its own,
    /// with `input` as its whole standard input and nothing else, and reads its
    /// standard output to the end. Standard error, the environment and the working
    /// directory are this process's, or the client's when the agent runs it for one
    /// (`client`: its standard error `dup2`ed, its directory entered with
    /// `posix_spawn_file_actions_addfchdir_np`, its environment as the command's); inside the
    /// agent without a client, standard error is `/dev/null` (never the agent's log). No
    /// other descriptor is inherited, nor are blocked or ignored signals. The input is
    /// written into the pipe before the command starts (so a command that never
    /// reads it cannot raise SIGPIPE here). Past `deadline` the whole group gets SIGKILL.
    /// - Throws: `.invalidInput` when `input` does not fit in a pipe (64 KiB) or
    ///   the output exceeds `outputLimit`; `.io` naming the call that failed.
    static func runShellCommand(
        _ command: String, input: SecretBytes, outputLimit: Int, deadline: Duration, client: ClientWorld? = nil,
        inAgent: Bool = false
    ) throws -> ShellCommandResult {
        guard input.count <= 65_536 else {
            throw LatchkeyError(.invalidInput, "the refresh token is longer than 64 KiB")
        }
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        try check("pipe2", path: "a pipe") { pipe2(&toChild, O_CLOEXEC) }
        defer { for descriptor in toChild where descriptor >= 0 { close(descriptor) } }
        try write(input, toDescriptor: toChild[1], name: "the refresh command's standard input")
        close(toChild[1])
        toChild[1] = -1
        try check("pipe2", path: "a pipe") { pipe2(&fromChild, O_CLOEXEC) }
        defer { for descriptor in fromChild where descriptor >= 0 { close(descriptor) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        if let client {
            posix_spawn_file_actions_adddup2(&actions, client.standardError.number, 2)
            posix_spawn_file_actions_addfchdir_np(&actions, client.workingDirectory.number)
        } else if inAgent {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        _ = latchkey_spawnattr_reset_signals(&attributes, Int16(POSIX_SPAWN_SETPGROUP), 1)
        let words: [String] = ["sh", "-c", command]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        // The client's environment is laid out in zeroing memory, `NAME=VALUE` and a NUL each,
        // and `posix_spawn` copies it into the child: no copy of a value is left behind here.
        let environment = client.map { client in
            SecretBytes(concatenating: client.environment.flatMap { [$0, SecretBytes([0])] })
        }
        let spawned =
            environment.map { environment in
                environment.withUnsafeBytes { bytes in
                    var pointers: [UnsafeMutablePointer<CChar>?] = []
                    if let base = bytes.baseAddress {
                        var start = 0
                        for (index, byte) in bytes.enumerated() where byte == 0 {
                            pointers.append(
                                UnsafeMutablePointer(mutating: (base + start).assumingMemoryBound(to: CChar.self)))
                            start = index + 1
                        }
                    }
                    pointers.append(nil)
                    return posix_spawn(&child, "/bin/sh", &actions, &attributes, argv, pointers)
                }
            } ?? posix_spawn(&child, "/bin/sh", &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw error(errno: spawned, function: "posix_spawn", path: "/bin/sh") }
        close(toChild[0])
        toChild[0] = -1
        close(fromChild[1])
        fromChild[1] = -1

        let expired = Mutex(false)
        let watchdog = DispatchWorkItem {
            expired.withLock { $0 = true }
            kill(-child, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .nanoseconds(Int(deadline / .nanoseconds(1))), execute: watchdog)
        let output: SecretBytes
        do {
            output = try readSecret(from: fromChild[0], limit: outputLimit, untilEnd: true).secret
        } catch {
            kill(-child, SIGKILL)
            _ = waitForExit(child)
            watchdog.cancel()
            throw error
        }
        let status = waitForExit(child)
        watchdog.cancel()
        return ShellCommandResult(status: status, output: output, timedOut: expired.withLock { $0 })
    }

    /// Waits for `child` to end (`waitpid`, resumed after a signal).
    /// - Returns: Its exit status; nil when a signal ended it.
    private static func waitForExit(_ child: pid_t) -> Int32? {
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, which Swift cannot import as macros.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
    }
}
