internal import CLatchkeyLinux
internal import Glibc
import Latchkey
import Synchronization

// Every C call of the tools (the CLI, the agent and the bench), the one system layer they
// share: the Unix sockets between a client and the agent (`POSIX.LocalSocket`) and the
// descriptors passed over them, starting processes (`POSIX.Launch`, the one spawn), the
// refresh command, the terminal, signals and the standard streams. Failures become
// `LatchkeyError`s through the library's one errno conversion (`POSIX.check`,
// `POSIX.valueOrErrno`, the one place an interrupted call is retried).

extension POSIX {
    /// A Unix-domain stream socket (`AF_UNIX`, `SOCK_STREAM`), closed when released:
    /// the agent's listening socket and each connection to it. Every wait has a
    /// deadline (`poll`), so a peer that stalls cannot hold a caller.
    package final class LocalSocket: @unchecked Sendable {
        // Sendable: the descriptor is immutable; the kernel serialises calls on it.
        private let descriptor: Int32
        /// The socket's path, for messages.
        package let path: String
        /// Descriptors the peer passed (`SCM_RIGHTS`) and nobody took yet; closed with the socket.
        private let passed = Mutex<[Int32]>([])

        private init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        deinit {
            close(descriptor)
            for received in passed.withLock({ $0 }) { close(received) }
        }

        /// Takes the descriptors the peer passed with what was received so far, in the order sent.
        package func takePassedDescriptors() -> [Descriptor] {
            passed.withLock { passed in
                defer { passed.removeAll() }
                return passed.map(Descriptor.init(adopting:))
            }
        }

        /// The socket address of `path`.
        /// - Throws: `.invalidInput` when the path does not fit (107 bytes).
        private static func address(_ path: String) throws -> sockaddr_un {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            let capacity = MemoryLayout.size(ofValue: address.sun_path)
            guard bytes.count < capacity, !bytes.contains(0) else {
                throw LatchkeyError(.invalidInput, "\(path): a socket path must be shorter than \(capacity) bytes")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
            return address
        }

        private static func newSocket(path: String) throws -> Int32 {
            try check("socket", path: path) {
                socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            }
        }

        /// A socket listening at `path`, created with its final mode: bound to
        /// `temporaryPath` (in the same directory; removed first when left there), made 0600
        /// (`chmod`) and listening there, then renamed to `path` (`rename`, replacing what is
        /// there). So a client never finds `path` naming a socket with another mode, or one
        /// nothing listens on, whatever the umask.
        /// - Throws: `.cannotCreate` or `.io` naming the failing call.
        package static func listening(at path: String, by temporaryPath: String, backlog: Int32 = 64) throws
            -> LocalSocket
        {
            let socket = LocalSocket(descriptor: try newSocket(path: path), path: path)
            var address = try address(temporaryPath)
            try POSIX.removeFile(temporaryPath)
            try check("bind", path: temporaryPath) {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            do {
                try check("chmod", path: temporaryPath) { chmod(temporaryPath, 0o600) }
                try check("listen", path: temporaryPath) { listen(socket.descriptor, backlog) }
                try check("rename", path: path) { Glibc.rename(temporaryPath, path) }
            } catch {
                // Nothing is left under the temporary name (a failure to remove it is not the one to report).
                try? POSIX.removeFile(temporaryPath)
                throw error
            }
            return socket
        }

        /// Two sockets connected to each other (`socketpair` of `AF_UNIX`, `SOCK_STREAM`), as an
        /// accepted connection and its client are: what the agent's tests serve requests over.
        /// - Throws: `.io` naming `socketpair`.
        package static func pair(named path: String) throws -> (LocalSocket, LocalSocket) {
            var descriptors: [Int32] = [-1, -1]
            try check("socketpair", path: path) {
                socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors)
            }
            return (
                LocalSocket(descriptor: descriptors[0], path: path), LocalSocket(descriptor: descriptors[1], path: path)
            )
        }

        /// Takes over a listening socket a service manager passed (`LISTEN_FDS`).
        /// - Throws: `.invalidInput` when `descriptor` is not a listening Unix stream socket.
        package static func adopting(descriptor: Int32, path: String) throws -> LocalSocket {
            var info = stat()
            try check("fstat", path: "file descriptor \(descriptor)") { fstat(descriptor, &info) }
            func option(_ name: Int32) -> Int32? {
                var value: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                return getsockopt(descriptor, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
            }
            guard info.st_mode & S_IFMT == S_IFSOCK, option(SO_ACCEPTCONN) == 1, option(SO_DOMAIN) == AF_UNIX,
                option(SO_TYPE) == Int32(SOCK_STREAM.rawValue)
            else {
                throw LatchkeyError(
                    .invalidInput,
                    "file descriptor \(descriptor) passed by the service manager is not a listening Unix stream socket")
            }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            // `accept` waits on it (a unit may pass it non-blocking).
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            return LocalSocket(descriptor: descriptor, path: path)
        }

        /// A connection to the socket at `path`, made before `deadline` (`connect` on a
        /// non-blocking socket, tried again while the listener's backlog is full).
        /// - Throws: `.unavailable` when nothing listens there (`ENOENT`,
        ///   `ECONNREFUSED`); `.timedOut` when the listener takes no connection before
        ///   `deadline`; `.insecurePermissions` when it may not be used; `.io`.
        package static func connected(
            to path: String, before deadline: ContinuousClock.Instant = .now + .seconds(2)
        ) throws -> LocalSocket {
            let socket = LocalSocket(
                descriptor: try check("socket", path: path) {
                    Glibc.socket(
                        AF_UNIX,
                        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                }, path: path)
            var address = try address(path)
            while true {
                let result = valueOrErrno {
                    withUnsafePointer(to: &address) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                        }
                    }
                }
                guard case .failure(let failure) = result else { return socket }
                let code = failure.code
                if code == ENOENT || code == ECONNREFUSED || code == ENOTDIR {
                    throw LatchkeyError(.unavailable, "nothing listens on \(path)", cFunction: "connect")
                }
                if code == EAGAIN {
                    // The listener's backlog is full: it takes no connection now.
                    guard ContinuousClock.now < deadline else {
                        throw LatchkeyError(
                            .timedOut, "\(path): the listener took no connection in time", cFunction: "connect")
                    }
                    POSIX.sleep(.milliseconds(5))
                    continue
                }
                throw error(errno: code, function: "connect", path: path)
            }
        }

        /// Waits until `events` can be done, at most until `deadline` of `clock`.
        /// - Returns: false when the deadline passed first.
        private func wait(
            for events: Int16, until deadline: ContinuousClock.Instant, clock: DeadlineClock
        ) throws -> Bool {
            while true {
                let left = min(deadline - clock.now(), clock.longestWait)
                guard left > .zero else { return false }
                let milliseconds = Int32(
                    left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
                var request = pollfd(fd: descriptor, events: events, revents: 0)
                let ready = try check("poll", path: path) { poll(&request, 1, milliseconds) }
                if ready > 0 { return true }
            }
        }

        /// Waits for the next connection (`accept`). Several threads may wait on
        /// one listening socket: the kernel hands each connection to one of them.
        package func accept() throws -> LocalSocket {
            while true {
                switch valueOrErrno({ Glibc.accept(descriptor, nil, nil) }) {
                case .success(let connection):
                    _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                    return LocalSocket(descriptor: connection, path: path)
                case .failure(let failure) where [ECONNABORTED, EPROTO].contains(failure.code):
                    continue // that connection went before it was taken: wait for the next
                case .failure(let failure):
                    throw error(errno: failure.code, function: "accept", path: path)
                }
            }
        }

        /// What the peer has sent that is not read yet, without waiting (`recv` with `MSG_PEEK`).
        package enum Pending: Sendable, Equatable {
            /// Nothing yet; the connection is open.
            case nothing
            /// Bytes are waiting.
            case bytes
            /// The peer closed its end (or the connection broke).
            case closed
        }

        /// Looks at what the peer sent that is not read yet, without taking it or waiting.
        package func pending() -> Pending {
            var byte: UInt8 = 0
            switch valueOrErrno({ recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) }) {
            case .success(let count): return count > 0 ? .bytes : .closed
            case .failure(let failure): return [EAGAIN, EWOULDBLOCK].contains(failure.code) ? .nothing : .closed
            }
        }

        /// The user id of the process at the other end (`SO_PEERCRED`), as the
        /// kernel recorded it when the connection was made.
        package func peerUserID() throws -> UInt32 {
            try peerCredentials().userID
        }

        /// The process id and user id of the process at the other end (`SO_PEERCRED`),
        /// as the kernel recorded them when the connection was made.
        package func peerCredentials() throws -> (processID: Int32, userID: UInt32) {
            var pid: Int32 = 0
            var uid: UInt32 = 0
            try check("getsockopt", path: path) { latchkey_peer_credentials(descriptor, &pid, &uid) }
            return (pid, uid)
        }

        /// Shuts the reading side down (`shutdown` with `SHUT_RD`): from then on every
        /// `send` of the peer fails (`EPIPE`), while what it sent before can still be read.
        package func shutDownReading() {
            // A socket already disconnected has nothing more to refuse.
            _ = Glibc.shutdown(descriptor, Int32(SHUT_RD))
        }

        /// Sends all of `bytes` (`send`, never raising SIGPIPE) before `deadline` of `clock`.
        /// - Throws: `.timedOut` when the peer does not take them in time; `.io`
        ///   when the connection is gone.
        package func send(
            _ bytes: UnsafeRawBufferPointer, before deadline: ContinuousClock.Instant,
            clock: DeadlineClock = .continuous
        ) throws {
            // Sent at once when the socket has room (the usual case), so `poll` runs only when it has none.
            var offset = 0
            while offset < bytes.count {
                let result = valueOrErrno {
                    Glibc.send(
                        descriptor, bytes.baseAddress! + offset, bytes.count - offset,
                        Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                switch result {
                case .success(let sent): offset += sent
                case .failure(let failure) where failure.code == EAGAIN:
                    guard try wait(for: Int16(POLLOUT), until: deadline, clock: clock) else {
                        throw LatchkeyError(.timedOut, "\(path): the peer did not take the message in time")
                    }
                case .failure(let failure): throw error(errno: failure.code, function: "send", path: path)
                }
            }
        }

        /// Receives exactly `buffer.count` bytes before `deadline` of `clock`.
        /// - Returns: false when the peer closed the connection before the first byte.
        /// - Throws: `.timedOut` when the bytes do not come in time; `.invalidInput`
        ///   when the peer closed the connection part-way; `.io`.
        package func receive(
            into buffer: UnsafeMutableRawBufferPointer, before deadline: ContinuousClock.Instant,
            clock: DeadlineClock = .continuous
        ) throws -> Bool {
            // Read at once when the bytes are there (the usual case), so `poll` runs only when they are not.
            var offset = 0
            while offset < buffer.count {
                let count: Int
                var descriptors: [Int32] = [-1, -1, -1, -1]
                var passedCount: Int32 = 0
                switch valueOrErrno({
                    latchkey_receive_descriptors(
                        descriptor, buffer.baseAddress! + offset, UInt(buffer.count - offset), &descriptors, 4,
                        &passedCount)
                }) {
                case .success(let received):
                    count = received
                    let taken = descriptors.prefix(Int(passedCount))
                    if !taken.isEmpty { passed.withLock { $0.append(contentsOf: taken) } }
                case .failure(let failure) where failure.code == EAGAIN:
                    guard try wait(for: Int16(POLLIN), until: deadline, clock: clock) else {
                        throw LatchkeyError(.timedOut, "\(path): the peer did not send the whole message in time")
                    }
                    continue
                case .failure(let failure) where failure.code == ECONNRESET:
                    // A peer that closed with input unread resets the connection: it is closed all the same.
                    count = 0
                case .failure(let failure): throw error(errno: failure.code, function: "recvmsg", path: path)
                }
                if count == 0 {
                    if offset == 0 { return false }
                    throw LatchkeyError(
                        .invalidInput, "\(path): the peer closed the connection in the middle of a message")
                }
                offset += count
            }
            return true
        }
    }

    /// An open file descriptor this value owns, closed when it is released: one a peer
    /// passed over the agent's socket, or this process's working directory to pass.
    package final class Descriptor: Sendable {
        /// The descriptor.
        package let number: Int32

        /// Takes over `number` (closed when this value is released).
        init(adopting number: Int32) {
            self.number = number
        }

        deinit { close(number) }
    }

    /// The path of this process's executable (`readlink` of `/proc/self/exe`).
    /// - Throws: `.io` when it cannot be read.
    package static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4097)
        let length = try check("readlink", path: "/proc/self/exe") { readlink("/proc/self/exe", &buffer, 4096) }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts `executable` with `arguments` in a session of its own (`posix_spawn`
    /// with `POSIX_SPAWN_SETSID`), detached from this process's terminal and
    /// streams: its standard streams are `/dev/null`, and no other descriptor is inherited.
    /// Nor are the caller's blocked signals (a test runner's threads block SIGTERM) or an
    /// ignored SIGHUP, SIGINT, SIGQUIT or SIGTERM: the new process can always be told to end.
    /// - Returns: The new process's id.
    /// - Throws: `.io` naming `posix_spawn` when it cannot be started.
    package static func spawnDetached(_ executable: String, arguments: [String]) throws -> Int32 {
        try Launch(executable, arguments: [executable] + arguments, detachment: .ownSession).start()
    }

    /// Lets go of everything this process inherited that could keep another
    /// process waiting: standard input and output become `/dev/null`; standard
    /// error is appended to `logPath` (created 0600) unless `logPath` is nil; every
    /// descriptor from `firstToClose` up is closed (`close_range`).
    /// - Throws: `.io` or `.cannotCreate` naming the call that failed.
    package static func detachStandardStreams(logPath: String?, closingFrom firstToClose: Int32) throws {
        _ = latchkey_close_from(UInt32(firstToClose))
        let null = try check("open", path: "/dev/null") { Glibc.open("/dev/null", O_RDWR | O_CLOEXEC) }
        defer { close(null) }
        try check("dup2", path: "/dev/null") { dup2(null, 0) }
        try check("dup2", path: "/dev/null") { dup2(null, 1) }
        guard let logPath else { return }
        try appendStandardError(to: logPath)
    }

    /// Makes standard error append to `logPath` (`open`, created 0600, never through a
    /// symbolic link; `dup2`).
    /// - Throws: `.io` or `.cannotCreate` naming the call that failed.
    private static func appendStandardError(to logPath: String) throws {
        let log = try check("open", path: logPath) {
            Glibc.open(logPath, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        defer { close(log) }
        try check("dup2", path: logPath) { dup2(log, 2) }
    }

    /// The size of the file standard error writes to (`fstat`); nil when it is not a regular file.
    package static func standardErrorFileSize() -> Int? {
        var info = stat()
        guard fstat(2, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Starts a new log: the file at `logPath` becomes `oldPath` (`rename`, replacing the
    /// one there; a log removed meanwhile is not an error), and standard error appends to
    /// a new file at `logPath` (created 0600).
    /// - Throws: `.io` or `.cannotCreate` naming the call that failed.
    package static func startNewLog(at logPath: String, keepingOldAs oldPath: String) throws {
        if case .failure(let failure) = valueOrErrno({ Glibc.rename(logPath, oldPath) }), failure.code != ENOENT {
            throw error(errno: failure.code, function: "rename", path: logPath)
        }
        try appendStandardError(to: logPath)
    }

    /// Whether standard error is the stream `JOURNAL_STREAM` names (`DEVICE:INODE`, as
    /// systemd sets it): only then does what the process writes there reach the journal.
    package static func standardErrorIsJournal(_ variable: String?) -> Bool {
        guard let variable else { return false }
        let parts = variable.split(separator: ":").map { UInt64($0) }
        guard parts.count == 2, let device = parts[0], let inode = parts[1] else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}

extension POSIX {
    /// A process ready to start (`posix_spawn`, or `posix_spawnp` searching `PATH`): its
    /// command line, environment, standard streams, working directory, process group or
    /// session and signal dispositions, laid out once, so it can be started many times
    /// (the bench times the start and the program only). The one way the tools start a process.
    package final class Launch {
        /// Where one of the new process's standard streams goes.
        package enum Stream {
            /// This process's own.
            case inherited
            /// `/dev/null`.
            case null
            /// The file at the path, opened for reading.
            case reading(String)
            /// The file at the path, created (0600) or emptied, opened for writing.
            case writing(String)
            /// An open descriptor of this process (`dup2`), which the caller keeps open until ``start()`` returns.
            case descriptor(Int32)
        }

        /// What the new process is detached from.
        package enum Detachment {
            /// Nothing: it stays in this process's group and session.
            case none
            /// A process group of its own (`POSIX_SPAWN_SETPGROUP`), whose id is its own.
            case ownGroup
            /// A session of its own (`POSIX_SPAWN_SETSID`), detached from this process's terminal.
            case ownSession
        }

        private let executable: String
        private let searchingPath: Bool
        private var actions = posix_spawn_file_actions_t()
        private var attributes = posix_spawnattr_t()
        private let argv: [UnsafeMutablePointer<CChar>?]
        /// The environment, `NAME=VALUE` and a NUL each, in zeroing memory; nil for this process's.
        private let environment: SecretBytes?
        /// Kept open until the process has started.

        /// Lays out a process to start.
        /// - Parameters:
        ///   - executable: The program's path, or its name when `searchingPath`.
        ///   - arguments: Its whole command line, `argv[0]` first.
        ///   - searchingPath: Whether `executable` is looked up on `PATH` (`posix_spawnp`).
        ///   - environment: Its variables as `NAME=VALUE` (a value may be a secret); nil: this process's.
        ///   - standardInput: Its standard input.
        ///   - standardOutput: Its standard output.
        ///   - standardError: Its standard error.
        ///   - detachment: Whether it gets a process group or session of its own.
        ///   - inheritingOthers: Whether it inherits this process's other descriptors that are not
        ///     close-on-exec, its blocked signals and its ignored SIGHUP, SIGINT, SIGQUIT, SIGTERM
        ///     and SIGPIPE (when false, it gets none of them, and can always be told to end).
        package init(
            _ executable: String, arguments: [String], searchingPath: Bool = false, environment: [SecretBytes]? = nil,
            standardInput: Stream = .null, standardOutput: Stream = .null, standardError: Stream = .null,
            detachment: Detachment = .none, inheritingOthers: Bool = false
        ) {
            self.executable = executable
            self.searchingPath = searchingPath
            self.environment = environment.map { SecretBytes(concatenating: $0.flatMap { [$0, SecretBytes([0])] }) }
            argv = arguments.map { strdup($0) } + [nil]
            posix_spawn_file_actions_init(&actions)
            for (number, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
                switch stream {
                case .inherited: break
                case .null:
                    posix_spawn_file_actions_addopen(
                        &actions, number, "/dev/null", number == 0 ? O_RDONLY : O_WRONLY, 0)
                case .reading(let path): posix_spawn_file_actions_addopen(&actions, number, path, O_RDONLY, 0)
                case .writing(let path):
                    posix_spawn_file_actions_addopen(&actions, number, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, number)
                }
            }
            posix_spawnattr_init(&attributes)
            var flags: Int16 = 0
            switch detachment {
            case .none: break
            case .ownGroup:
                posix_spawnattr_setpgroup(&attributes, 0)
                flags = Int16(POSIX_SPAWN_SETPGROUP)
            case .ownSession: flags = Int16(LATCHKEY_POSIX_SPAWN_SETSID)
            }
            if inheritingOthers {
                posix_spawnattr_setflags(&attributes, flags)
            } else {
                posix_spawn_file_actions_addclosefrom_np(&actions, 3)
                _ = latchkey_spawnattr_reset_signals(&attributes, flags, 1)
            }
        }

        deinit {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
            for pointer in argv { free(pointer) }
        }

        /// Starts the process (`posix_spawn` or `posix_spawnp`; the environment is copied
        /// into it, so no copy of a value is left behind here).
        /// - Returns: Its process id (also its group's id with ``Detachment/ownGroup``).
        /// - Throws: `.io` (or `.notFound`) naming `posix_spawn` when it cannot be started.
        package func start() throws -> Int32 {
            var child: pid_t = 0
            let spawn = searchingPath ? posix_spawnp : posix_spawn
            let result: Int32
            if let environment {
                result = environment.withUnsafeBytes { bytes in
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
                    return spawn(&child, executable, &actions, &attributes, argv, pointers)
                }
            } else {
                result = spawn(&child, executable, &actions, &attributes, argv, environ)
            }
            guard result == 0 else {
                throw error(errno: result, function: searchingPath ? "posix_spawnp" : "posix_spawn", path: executable)
            }
            return child
        }
    }

    /// How a process ended, as `waitpid` tells it.
    package struct Termination: Sendable, Equatable {
        /// Its exit status; nil when a signal ended it.
        package let status: Int32?
        /// The signal that ended it; nil when it exited.
        package let signal: Int32?

        /// Its status as a shell gives it: the exit status, or 128 + the signal.
        package var shellStatus: Int32 { status ?? 128 + (signal ?? 0) }
    }

    /// Waits for `child` to end (`waitpid`).
    /// - Throws: `.io` naming `waitpid` when it is not a child of this process.
    package static func waitForExit(_ child: Int32) throws -> Termination {
        var status: Int32 = 0
        try check("waitpid", path: "process \(child)") { waitpid(child, &status, 0) }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift cannot import as macros.
        let signal = status & 0x7F
        return signal == 0
            ? Termination(status: (status >> 8) & 0xFF, signal: nil) : Termination(status: nil, signal: signal)
    }

    /// Whether `child` has ended, without reaping it (`waitid` with `WNOWAIT`), so its
    /// process group id stays its own until this process has signalled the group.
    package static func hasEnded(_ child: Int32) throws -> Bool {
        var info = siginfo_t()
        try check("waitid", path: "process \(child)") {
            waitid(P_PID, id_t(child), &info, WEXITED | WNOHANG | WNOWAIT)
        }
        return info._sifields._kill.si_pid == child
    }

    /// A signal the tools send.
    package enum Signal: Sendable {
        /// SIGKILL.
        case kill
        /// SIGSTOP.
        case stop
        /// SIGCONT.
        case resume
        /// SIGINT.
        case interrupt
        /// SIGTERM.
        case terminate
        /// SIGHUP.
        case hangUp

        /// Its number.
        package var number: Int32 {
            switch self {
            case .kill: SIGKILL
            case .stop: SIGSTOP
            case .resume: SIGCONT
            case .interrupt: SIGINT
            case .terminate: SIGTERM
            case .hangUp: SIGHUP
            }
        }
    }

    /// Sends `signal` to the process `process`, or to the process group `-process` when
    /// `process` is negative (`kill`). A process that is gone is not an error.
    package static func send(_ signal: Signal, to process: Int32) {
        _ = kill(process, signal.number)
    }

    /// Makes a fresh private directory under `base`, named `prefix.XXXXXX` (`mkdtemp`).
    /// - Throws: `.io` or `.cannotCreate` naming `mkdtemp`.
    package static func makeTemporaryDirectory(in base: String, prefix: String) throws -> String {
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        return try template.withUnsafeMutableBufferPointer { buffer in
            try check("mkdtemp", path: base) { mkdtemp(buffer.baseAddress!) == nil ? -1 : 0 }
            return String(cString: buffer.baseAddress!)
        }
    }
}

extension POSIX {
    /// The process's arguments (`argv`), the tool's name first: each decoded
    /// from UTF-8, with whether its bytes were valid UTF-8 (where they were not,
    /// the text holds U+FFFD in their place and must not be used).
    package static func commandLineArguments() -> [(text: String, isUTF8: Bool)] {
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
    package static func openClosedStandardDescriptors() {
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
    package static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// Reads one line (its newline not kept) from the terminal on `descriptor` into
    /// zeroing memory, with echo switched off (`tcgetattr`/`tcsetattr`) while reading
    /// and restored after, writing `prompt` to standard error once echo is off.
    /// - Returns: the bytes, and whether input ended before any byte was read.
    /// - Throws: `.invalidInput` when the input exceeds `limit`; `.io` on a read failure.
    package static func readSecretLineWithoutEcho(
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
    package struct ShellCommandResult {
        /// Its exit status; nil when a signal ended it.
        package var status: Int32?
        /// What it wrote to standard output, in zeroing memory.
        package var output: SecretBytes
        /// Whether it was stopped for running past its deadline.
        package var timedOut: Bool
    }

    /// Runs `/bin/sh -c command` (``Launch``) in a process group of its own,
    /// with `input` as its whole standard input and nothing else, and reads its
    /// standard output until the command (the shell) has ended. Standard error, the
    /// environment and the working directory are this process's (the client's own: through
    /// the agent the client runs the command, docs/AGENT.md). No other descriptor is inherited,
    /// nor are blocked or ignored signals. The input is written into the pipe before the
    /// command starts (so a command that never reads it cannot raise SIGPIPE here).
    ///
    /// It never waits for end of file alone: a child the command left behind may hold
    /// standard output open for as long as it likes. When the shell ends, what is in the
    /// pipe is its output, and whatever is left of its process group gets SIGKILL. Past
    /// `deadline` the whole group gets SIGKILL and the run ends at once (`timedOut`),
    /// whoever still holds the pipe (a child that left the group with `setsid`).
    /// - Throws: `.invalidInput` when `input` does not fit in a pipe (64 KiB) or
    ///   the output exceeds `outputLimit`; `.io` naming the call that failed.
    package static func runShellCommand(
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

        let child = try Launch(
            "/bin/sh", arguments: ["sh", "-c", command], standardInput: .descriptor(toChild[0]),
            standardOutput: .descriptor(fromChild[1]), standardError: .inherited, detachment: .ownGroup
        ).start()
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
                    _ = try? waitForExit(child)
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
            _ = try? waitForExit(child)
            throw error
        }
        // A shell this process cannot wait for (never: it is its child) counts as having exited 0.
        let status: Int32? = (try? waitForExit(child)).map { $0.status } ?? 0
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
}

/// SIGINT, SIGTERM and SIGHUP held back while a refresh is in flight in this process
/// (`session get --refresh-command`, docs/ROTATION.md): once the refresh command may have
/// spent the refresh token, the process must live until the rotated grant is saved. From
/// ``begin()`` on, each of them that has its default action gets a handler (`sigaction`)
/// that only notes it; ``finish()`` puts the earlier actions back and, when one came,
/// ends the process by that signal (the shell's status 128+n). A signal this process
/// ignores (`nohup`) stays ignored. The command line may change this process-wide state;
/// the library never does. Only one refresh runs in a command, so one deferral is live at a time.
package final class SignalDeferral {
    /// The signals held back.
    package static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    /// The signal that came (0: none); written by the handler, so an atomic, initialised before any handler is set.
    private static let caught = Atomic<Int32>(0)
    /// The actions replaced, to put back.
    private var saved: [(signal: Int32, action: sigaction)] = []

    /// A deferral that holds nothing back yet.
    package init() {}

    /// Starts holding the signals back (once; later calls do nothing).
    package func begin() {
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
    package func finish() {
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
    package func settling<R>(_ body: () throws -> R) rethrows -> R {
        defer { finish() }
        return try body()
    }
}

extension POSIX {
    /// A pipe (`pipe2` with `O_CLOEXEC`), its ends closed when released: what a child started
    /// with its writing end as a standard stream (``Launch/Stream/descriptor(_:)``) writes is
    /// read here as it comes.
    package final class Pipe {
        /// The reading end.
        private let reading: Int32
        /// The writing end; -1 once closed.
        private var writing: Int32

        /// A new pipe.
        /// - Throws: `.io` naming `pipe2`.
        package init() throws {
            var ends: [Int32] = [-1, -1]
            try check("pipe2", path: "a pipe") { pipe2(&ends, O_CLOEXEC) }
            reading = ends[0]
            writing = ends[1]
        }

        deinit {
            close(reading)
            if writing >= 0 { close(writing) }
        }

        /// The writing end, to hand to a child; -1 once ``closeWritingEnd()`` closed it.
        package var writingEnd: Int32 { writing }

        /// Closes the writing end (once the child has its own), so that reading finds the
        /// end once every child holding it closed it.
        package func closeWritingEnd() {
            guard writing >= 0 else { return }
            close(writing)
            writing = -1
        }

        /// What the pipe holds, at most `limit` bytes, waiting until something comes (`read`).
        /// - Returns: The bytes; none at the end.
        /// - Throws: `.io` naming `read`.
        package func read(upTo limit: Int = 65_536) throws -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: limit)
            let count = try check("read", path: "a pipe") { Glibc.read(reading, &buffer, limit) }
            return Array(buffer.prefix(count))
        }
    }
}
