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
    /// standard output until the command (the shell) has ended. Standard error, the
    /// environment and the working directory are this process's (the client's: the agent
    /// has its client run it). No other descriptor is inherited, nor are blocked or ignored signals. The input
    /// is written into the pipe before the command starts (so a command that never reads it
    /// cannot raise SIGPIPE here).
    ///
    /// It never waits for end of file alone: a child the command left behind may hold
    /// standard output open for as long as it likes. When the shell ends, what is in the
    /// pipe is its output, and whatever is left of its process group gets SIGKILL. Past
    /// `deadline` the whole group gets SIGKILL and the run ends at once (`timedOut`),
    /// whoever still holds the pipe (a child that left the group with `setsid`).
    /// - Throws: `.invalidInput` when `input` does not fit in a pipe (64 KiB) or
    ///   the output exceeds `outputLimit`; `.io` naming the call that failed.
    static func runShellCommand(
        _ command: String, input: SecretBytes, outputLimit: Int, deadline: Duration
    ) throws -> ShellCommandResult {
        guard input.count <= 65_536 else {
            throw LatchkeyError(.invalidInput, "the refresh token is longer than 64 KiB")
        }
        let giveUp = ContinuousClock.now + deadline
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
        let spawned = posix_spawn(&child, "/bin/sh", &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw error(errno: spawned, function: "posix_spawn", path: "/bin/sh") }
        close(toChild[0])
        toChild[0] = -1
        close(fromChild[1])
        fromChild[1] = -1

        var output = CommandOutput(limit: outputLimit)
        do {
            while true {
                let left = giveUp - ContinuousClock.now
                guard left > .zero else {
                    // The deadline: the whole group, and no wait for a pipe someone else may hold.
                    kill(-child, SIGKILL)
                    _ = waitForExit(child)
                    return ShellCommandResult(status: nil, output: SecretBytes(), timedOut: true)
                }
                // Look at the shell at least every 50 ms: it may have ended while a child it left holds the pipe.
                let milliseconds = Int32(max(1, min(left, .milliseconds(50)) / .milliseconds(1)))
                if !output.ended, try isReadable(fromChild[0], milliseconds: milliseconds) {
                    try output.read(from: fromChild[0])
                    continue
                }
                if try hasEnded(child) { break }
                if output.ended { POSIX.sleep(.milliseconds(10)) }
            }
            // Nothing of the command outlives it: what is left of its group is ended before the
            // shell is reaped (so the group's id is still its own), then what the pipe already
            // holds is the answer.
            kill(-child, SIGKILL)
            while !output.ended, try isReadable(fromChild[0], milliseconds: 0) { try output.read(from: fromChild[0]) }
        } catch {
            kill(-child, SIGKILL)
            _ = waitForExit(child)
            throw error
        }
        let status = waitForExit(child)
        return ShellCommandResult(status: status, output: output.secret(), timedOut: false)
    }

    /// What a command wrote to standard output, gathered in zeroing memory.
    private struct CommandOutput {
        let limit: Int
        var parts: [SecretBytes] = []
        var count = 0
        /// Whether the pipe reached its end.
        var ended = false

        init(limit: Int) { self.limit = limit }

        /// Reads what `descriptor` holds now (`read`), once.
        mutating func read(from descriptor: Int32) throws {
            var got = 0
            let chunk = try SecretBytes(count: 4096) { buffer in
                got = try POSIX.check("read", path: "the refresh command's standard output") {
                    Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                }
            }
            guard got > 0 else {
                ended = true
                return
            }
            guard count + got <= limit else {
                throw LatchkeyError(.invalidInput, "the refresh command wrote more than \(limit) bytes")
            }
            count += got
            parts.append(chunk.withUnsafeBytes { SecretBytes(UnsafeRawBufferPointer(rebasing: $0[..<got])) })
        }

        func secret() -> SecretBytes { SecretBytes(concatenating: parts) }
    }

    /// Whether `descriptor` has something to read (or its end) within `milliseconds` (`poll`).
    private static func isReadable(_ descriptor: Int32, milliseconds: Int32) throws -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return try check("poll", path: "the refresh command's standard output") { poll(&request, 1, milliseconds) } > 0
    }

    /// Whether `child` has ended, without reaping it (`waitid` with `WNOWAIT`), so its
    /// process group id stays its own until this process has signalled the group.
    private static func hasEnded(_ child: pid_t) throws -> Bool {
        var info = siginfo_t()
        try check("waitid", path: "the refresh command") {
            waitid(P_PID, id_t(child), &info, WEXITED | WNOHANG | WNOWAIT)
        }
        return info._sifields._kill.si_pid == child
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

/// SIGINT, SIGTERM and SIGHUP held back while a refresh is in flight in this process
/// (`session get --refresh-command`, docs/ROTATION.md): once the refresh command may have
/// spent the refresh token, the process must live until the rotated grant is saved. From
/// ``begin()`` on, each of them that has its default action gets a handler (`sigaction`)
/// that only notes it; ``finish()`` puts the earlier actions back and, when one came,
/// ends the process by that signal (the shell's status 128+n). A signal this process
/// ignores (`nohup`) stays ignored. The command line may change this process-wide state;
/// the library never does. Only one refresh runs in a command, so one deferral is live at a time.
final class SignalDeferral {
    /// The signals held back.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    /// The signal that came (0: none); written by the handler, so an atomic, initialised before any handler is set.
    private static let caught = Atomic<Int32>(0)
    /// The actions replaced, to put back.
    private var saved: [(signal: Int32, action: sigaction)] = []

    /// Starts holding the signals back (once; later calls do nothing).
    func begin() {
        guard saved.isEmpty else { return }
        SignalDeferral.caught.store(0, ordering: .sequentiallyConsistent)
        for signal in SignalDeferral.signals {
            var old = sigaction()
            guard sigaction(signal, nil, &old) == 0,
                unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_DFL, to: Int.self)
            else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = {
                SignalDeferral.caught.store($0, ordering: .sequentiallyConsistent)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            if sigaction(signal, &action, nil) == 0 { saved.append((signal, old)) }
        }
    }

    /// Stops holding the signals back; when one came meanwhile, ends the process by it
    /// (its default action, so the parent sees the signal; `exit(128 + n)` should it not end it).
    func finish() {
        guard !saved.isEmpty else { return }
        for (signal, action) in saved {
            var action = action
            sigaction(signal, &action, nil)
        }
        saved = []
        let signal = SignalDeferral.caught.exchange(0, ordering: .sequentiallyConsistent)
        guard signal != 0 else { return }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, signal)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        raise(signal)
        exit(128 + signal)
    }

    /// Runs `body` (which calls ``begin()`` once a refresh starts), then ``finish()``, whether it returned or threw.
    func settling<R>(_ body: () throws -> R) rethrows -> R {
        defer { finish() }
        return try body()
    }
}
