internal import CLatchkeyLinux
internal import Glibc
import Latchkey
import Synchronization

// Every C call of the agent and its client: the Unix socket between them
// (`POSIX.LocalSocket`), starting an agent detached from the client, and letting
// go of the streams an agent inherited. Failures become `LatchkeyError`s through
// the library's one errno conversion (`POSIX.check`, `POSIX.valueOrErrno`, which
// also retries EINTR).

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

        /// Waits until `events` can be done, at most until `deadline`.
        /// - Returns: false when the deadline passed first.
        private func wait(for events: Int16, until deadline: ContinuousClock.Instant) throws -> Bool {
            while true {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                let milliseconds = Int32(
                    min(
                        left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000
                    ))
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

        /// Sends all of `bytes` (`send`, never raising SIGPIPE) before `deadline`.
        /// - Throws: `.timedOut` when the peer does not take them in time; `.io`
        ///   when the connection is gone.
        package func send(_ bytes: UnsafeRawBufferPointer, before deadline: ContinuousClock.Instant) throws {
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
                    guard try wait(for: Int16(POLLOUT), until: deadline) else {
                        throw LatchkeyError(.timedOut, "\(path): the peer did not take the message in time")
                    }
                case .failure(let failure): throw error(errno: failure.code, function: "send", path: path)
                }
            }
        }

        /// Sends all of `bytes` before `deadline`, with `descriptors` (at most 4) attached to the
        /// first of them (`sendmsg` with `SCM_RIGHTS`): the peer gets descriptors of its own for
        /// the same open files.
        /// - Throws: `.timedOut` when the peer does not take them in time; `.io` when the connection is gone.
        package func send(
            _ bytes: UnsafeRawBufferPointer, passing descriptors: [Int32], before deadline: ContinuousClock.Instant
        ) throws {
            precondition(descriptors.count <= 4 && !bytes.isEmpty, "at most 4 descriptors, with at least one byte")
            while true {
                let result = valueOrErrno {
                    latchkey_send_descriptors(
                        descriptor, bytes.baseAddress!, UInt(bytes.count), descriptors, Int32(descriptors.count))
                }
                switch result {
                case .success(let sent):
                    try send(UnsafeRawBufferPointer(rebasing: bytes[sent...]), before: deadline)
                    return
                case .failure(let failure) where failure.code == EAGAIN:
                    guard try wait(for: Int16(POLLOUT), until: deadline) else {
                        throw LatchkeyError(.timedOut, "\(path): the peer did not take the message in time")
                    }
                case .failure(let failure): throw error(errno: failure.code, function: "sendmsg", path: path)
                }
            }
        }

        /// Receives exactly `buffer.count` bytes before `deadline`.
        /// - Returns: false when the peer closed the connection before the first byte.
        /// - Throws: `.timedOut` when the bytes do not come in time; `.invalidInput`
        ///   when the peer closed the connection part-way; `.io`.
        package func receive(into buffer: UnsafeMutableRawBufferPointer, before deadline: ContinuousClock.Instant)
            throws -> Bool
        {
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
                    guard try wait(for: Int16(POLLIN), until: deadline) else {
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

        /// The working directory of this process, opened to be passed on (`open` of `.`
        /// with `O_PATH`, so a directory that may be entered but not read can be too).
        /// - Throws: `.io` naming `open`.
        package static func workingDirectory() throws -> Descriptor {
            Descriptor(
                adopting: try check("open", path: "the working directory") {
                    Glibc.open(".", LATCHKEY_O_PATH | O_DIRECTORY | O_CLOEXEC)
                })
        }
    }

    /// Every variable of this process's environment as `NAME=VALUE`, read from `environ`
    /// straight into zeroing memory (a variable may hold a secret, such as a client secret).
    package static func environmentEntries() -> [SecretBytes] {
        var entries: [SecretBytes] = []
        var cursor = environ
        while let entry = cursor.pointee {
            entries.append(SecretBytes(UnsafeRawBufferPointer(start: entry, count: strlen(entry))))
            cursor += 1
        }
        return entries
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        _ = latchkey_spawnattr_reset_signals(&attributes, Int16(LATCHKEY_POSIX_SPAWN_SETSID), 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw error(errno: result, function: "posix_spawn", path: executable) }
        return child
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
