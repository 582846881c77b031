internal import CLatchkeyLinux
import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif

// Every POSIX file-system call lives in this file. Failures become
// `LatchkeyError`s in `POSIX.check`, which also retries EINTR, and keep the
// failing call's name; nothing outside sees a raw descriptor's C API or errno.

/// Thin, internal wrappers over the POSIX file calls Latchkey needs.
package enum POSIX {
    /// What `stat` reports about a path, in the parts Latchkey uses.
    struct Status: Equatable, Sendable {
        /// Permission bits (the low 12 bits of `st_mode`).
        var permissions: UInt32
        /// The owner's user id.
        var owner: UInt32
        /// Whether the path is a directory.
        var isDirectory: Bool
        /// Whether the path is a regular file.
        var isRegularFile: Bool
        /// Whether the path is a symbolic link (only `lstat` reports one).
        var isSymbolicLink: Bool
        /// The kind of file in words, for messages: `regular file`, `directory`,
        /// `symbolic link`, `FIFO`, `character device`, `block device` or `socket`.
        var typeName: String
        /// Size in bytes.
        var size: Int
        /// Device and inode, which identify the file.
        var device: UInt64
        var inode: UInt64
        /// Last modification, in nanoseconds since the epoch.
        var modified: Int64
    }

    /// The effective user id of this process (`geteuid`, asked once: Latchkey never changes it).
    package static let effectiveUserID: UInt32 = geteuid()

    /// The id of this process (`getpid`).
    package static var processID: Int32 { getpid() }

    /// The value of the environment variable `name` (`getenv`), without decoding the whole environment.
    /// Bytes that are not UTF-8 would be replaced: check ``environmentValueIsUTF8(_:)`` first
    /// where the value names something.
    package static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Whether the environment variable `name` is unset or valid UTF-8 (`getenv`).
    package static func environmentValueIsUTF8(_ name: String) -> Bool {
        getenv(name).map { String(validatingCString: $0) != nil } ?? true
    }

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

    /// The path of this process's executable (`readlink` of `/proc/self/exe`).
    /// - Throws: `.io` when it cannot be read.
    package static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4097)
        let length = try check("readlink", path: "/proc/self/exe") { readlink("/proc/self/exe", &buffer, 4096) }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs `call` until it does not fail with EINTR, and converts a failure
    /// (a negative result) into a `LatchkeyError` naming `function` and `path`.
    @discardableResult
    static func check<T: BinaryInteger>(_ function: String, path: String, _ call: () -> T) throws -> T {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw error(errno: code, function: function, path: path)
        }
    }

    /// The `LatchkeyError` for an errno value.
    static func error(errno code: Int32, function: String, path: String) -> LatchkeyError {
        let message = "\(path): \(String(cString: strerror(code)))"
        switch code {
        case ENOENT, ENOTDIR:
            return LatchkeyError(.notFound, message, cFunction: function, errnoCode: code)
        case ELOOP:
            // `open` with O_NOFOLLOW met a symbolic link: it could point anywhere.
            let refused = symbolicLinkError(path, cFunction: function)
            return LatchkeyError(refused.code, refused.message, cFunction: function, errnoCode: code)
        case EACCES, EPERM:
            return LatchkeyError(.insecurePermissions, message, cFunction: function, errnoCode: code)
        case EEXIST, ENOSPC, EROFS, EDQUOT, EMFILE, ENFILE:
            let kind: LatchkeyError.Code = function == "open" || function == "mkdir" ? .cannotCreate : .io
            return LatchkeyError(kind, message, cFunction: function, errnoCode: code)
        default:
            return LatchkeyError(.io, message, cFunction: function, errnoCode: code)
        }
    }

    /// An open file descriptor, closed when the owner is released.
    final class File: @unchecked Sendable {
        // Sendable: the descriptor is immutable; the kernel serialises calls on it.
        let descriptor: Int32
        let path: String

        private init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        deinit { close(descriptor) }

        /// How to open a file.
        enum Mode {
            /// Read only; the file must exist.
            case read
            /// Read and write, creating it with `permissions` when absent.
            case readWriteCreate(permissions: UInt32)
            /// Write only, failing when the file exists (`O_EXCL`).
            case createNew(permissions: UInt32)
            /// Append only, creating it with `permissions` when absent.
            case appendCreate(permissions: UInt32)
            /// Read anywhere and append, creating it with `permissions` when absent.
            case readAppendCreate(permissions: UInt32)
        }

        /// Opens the regular file `path` (`open`, with `O_CLOEXEC`, `O_NOFOLLOW`
        /// and `O_NONBLOCK`, then `fstat`). `O_NONBLOCK` means a FIFO in its place
        /// cannot make the open wait for a writer; it changes nothing for a regular file.
        /// - Throws: `.notFound` when it does not exist; `.insecurePermissions` when
        ///   it is a symbolic link; `.invalidInput` naming the path when it is not a
        ///   regular file (a FIFO, a device, a directory); `.cannotCreate` or `.io` otherwise.
        static func open(_ path: String, _ mode: Mode) throws -> File {
            var flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
            var permissions: mode_t = 0
            switch mode {
            case .read:
                flags |= O_RDONLY
            case .readWriteCreate(let p):
                flags |= O_RDWR | O_CREAT
                permissions = mode_t(p)
            case .createNew(let p):
                flags |= O_WRONLY | O_CREAT | O_EXCL
                permissions = mode_t(p)
            case .appendCreate(let p):
                flags |= O_WRONLY | O_CREAT | O_APPEND
                permissions = mode_t(p)
            case .readAppendCreate(let p):
                flags |= O_RDWR | O_CREAT | O_APPEND
                permissions = mode_t(p)
            }
            let descriptor = try POSIX.check("open", path: path) { Glibc.open(path, flags, permissions) }
            let file = File(descriptor: descriptor, path: path)
            let status = try file.status()
            guard status.isRegularFile else { throw POSIX.wrongType(path, status, expected: "regular file") }
            return file
        }

        /// Reads the whole file from the start (`pread`), refusing one longer than
        /// `limit` bytes: by its size (`fstat`) before any byte is read, and again by
        /// what the reads give should it grow meanwhile. Allocates what the file
        /// holds, never `limit`.
        /// - Throws: `.invalidInput` naming the path and `what` when it is longer than `limit`; `.io`.
        func readAll(limit: Int, what: String = "such a file") throws -> [UInt8] {
            func tooLong() -> LatchkeyError {
                LatchkeyError(
                    .invalidInput, "\(path) is longer than \(limit) bytes, the most Latchkey reads from \(what)")
            }
            let size = try status().size
            guard size <= limit else { throw tooLong() }
            var bytes = try read(upTo: size + 1, at: 0)
            while bytes.count > size { // it grew meanwhile (an append): read on, within the limit
                guard bytes.count <= limit else { throw tooLong() }
                let more = try read(upTo: min(64 * 1024, limit + 1 - bytes.count), at: bytes.count)
                if more.isEmpty { break }
                bytes += more
            }
            guard bytes.count <= limit else { throw tooLong() }
            return bytes
        }

        /// Writes all of `bytes` (`write`), continuing after short writes.
        func writeAll(_ bytes: [UInt8]) throws {
            try bytes.withUnsafeBytes { try POSIX.writeAll($0, to: descriptor, name: path) }
        }

        /// Writes all bytes of a secret (`write`), continuing after short writes.
        func writeAll(_ secret: SecretBytes) throws {
            try secret.withUnsafeBytes { try POSIX.writeAll($0, to: descriptor, name: path) }
        }

        /// Flushes data and metadata to the disk (`fsync`).
        func sync() throws {
            try POSIX.check("fsync", path: path) { fsync(descriptor) }
        }

        /// Flushes the data, and the metadata needed to read it back, to the disk (`fdatasync`).
        func syncData() throws {
            try POSIX.check("fdatasync", path: path) { fdatasync(descriptor) }
        }

        /// Writes all of `bytes` at `offset` (`pwrite`), continuing after short writes.
        func write(_ bytes: [UInt8], at offset: Int) throws {
            var written = 0
            while written < bytes.count {
                written += try bytes.withUnsafeBytes { buffer in
                    try POSIX.check("pwrite", path: path) {
                        pwrite(
                            descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(offset + written))
                    }
                }
            }
        }

        /// Truncates the file to `length` bytes (`ftruncate`).
        func truncate(to length: Int) throws {
            try POSIX.check("ftruncate", path: path) { ftruncate(descriptor, off_t(length)) }
        }

        /// Takes an exclusive `flock` on the file unless another open file holds one.
        /// - Returns: false when another holder has it (`EWOULDBLOCK`).
        func tryLockExclusively() throws -> Bool {
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EWOULDBLOCK { return false }
                throw POSIX.error(errno: code, function: "flock", path: path)
            }
            return true
        }

        /// Waits for an exclusive lock on the whole file (`flock(LOCK_EX)`); it
        /// is released when the descriptor is closed.
        func lockExclusively() throws {
            try POSIX.check("flock", path: path) { flock(descriptor, LOCK_EX) }
        }

        /// Reads up to `count` bytes starting at `offset` (`pread`); fewer only at the end of the file.
        func read(upTo count: Int, at offset: Int) throws -> [UInt8] {
            // Read straight into the array's storage: no zero-filling first.
            try [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in
                while filled < count {
                    let done = filled
                    let got = try POSIX.check("pread", path: path) {
                        pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                    }
                    if got == 0 { break }
                    filled += got
                }
            }
        }

        /// Reads exactly `count` bytes from the start (`pread`) straight into zeroing
        /// memory, or nil when the file holds fewer or more bytes.
        func readSecret(count: Int) throws -> SecretBytes? {
            var filled = 0
            let secret = try SecretBytes(count: count, guarded: true) { out in
                while filled < count {
                    let got = try POSIX.check("pread", path: path) {
                        pread(descriptor, out.baseAddress! + filled, count - filled, off_t(filled))
                    }
                    if got == 0 { break }
                    filled += got
                }
            }
            var probe: UInt8 = 0
            let extra = try POSIX.check("pread", path: path) { pread(descriptor, &probe, 1, off_t(count)) }
            return filled == count && extra == 0 ? secret : nil
        }

        /// What `fstat` reports about the open file.
        func status() throws -> Status {
            var info = stat()
            try POSIX.check("fstat", path: path) { fstat(descriptor, &info) }
            return Status(info)
        }
    }

    /// The error for a path that is not of the `expected` type (`regular file`,
    /// `directory`): `.insecurePermissions` for a symbolic link (it could point
    /// anywhere), else `.invalidInput`, both naming the path and what it is.
    static func wrongType(_ path: String, _ status: Status, expected: String) -> LatchkeyError {
        if status.isSymbolicLink { return symbolicLinkError(path, cFunction: nil) }
        return LatchkeyError(.invalidInput, "\(path) is a \(status.typeName), not a \(expected)")
    }

    /// The error for a symbolic link where Latchkey expects its own file or
    /// directory: `.insecurePermissions`, as the link could point anywhere.
    static func symbolicLinkError(_ path: String, cFunction: String?) -> LatchkeyError {
        LatchkeyError(
            .insecurePermissions, "\(path) is a symbolic link, which Latchkey does not follow", cFunction: cFunction)
    }

    /// What `lstat` reports about `path`, or nil when it does not exist.
    static func status(of path: String) throws -> Status? {
        var info = stat()
        while lstat(path, &info) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == ENOENT || code == ENOTDIR { return nil }
            throw error(errno: code, function: "lstat", path: path)
        }
        return Status(info)
    }

    /// Creates a directory with `permissions` (`mkdir`); an existing one is left as it is.
    static func makeDirectory(_ path: String, permissions: UInt32) throws {
        if mkdir(path, mode_t(permissions)) == 0 { return }
        let code = errno
        if code == EEXIST { return }
        if code == ENOTDIR {
            // A parent is a file: nothing can be created there (not "not found").
            throw LatchkeyError(.cannotCreate, "\(path): a parent is not a directory", cFunction: "mkdir")
        }
        throw error(errno: code, function: "mkdir", path: path)
    }

    /// Renames `source` over `destination` atomically (`rename`).
    static func rename(_ source: String, to destination: String) throws {
        try check("rename", path: destination) { Glibc.rename(source, destination) }
    }

    /// Gives `source` a second name `destination` (`link`) unless `destination`
    /// exists: an atomic "create if absent".
    /// - Returns: false when `destination` already existed (`EEXIST`).
    static func link(_ source: String, to destination: String) throws -> Bool {
        while Glibc.link(source, destination) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EEXIST { return false }
            throw error(errno: code, function: "link", path: destination)
        }
        return true
    }

    /// Removes a file (`unlink`); a missing file is not an error.
    static func removeFile(_ path: String) throws {
        if unlink(path) == 0 { return }
        let code = errno
        if code == ENOENT { return }
        throw error(errno: code, function: "unlink", path: path)
    }

    /// Removes a directory when it is empty (`rmdir`); a directory that still
    /// holds entries, or none at all, is left as it is.
    static func removeDirectoryIfEmpty(_ path: String) throws {
        if rmdir(path) == 0 { return }
        let code = errno
        if code == ENOTEMPTY || code == EEXIST || code == ENOENT { return }
        throw error(errno: code, function: "rmdir", path: path)
    }

    /// Flushes a directory's entries to the disk (`open` + `fsync`), so a rename
    /// or an unlink inside it survives a crash.
    static func syncDirectory(_ path: String) throws {
        let descriptor = try check("open", path: path) { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(descriptor) }
        try check("fsync", path: path) { fsync(descriptor) }
    }

    /// The names in a directory (`opendir`/`readdir`), without `.` and `..`.
    static func directoryEntries(_ path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            throw error(errno: errno, function: "opendir", path: path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

extension POSIX {
    /// Writes all of `buffer` to `descriptor` (`write`), continuing after short
    /// writes; `name` names the file or stream in errors.
    static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, name: String) throws {
        var offset = 0
        while offset < buffer.count {
            let written = try check("write", path: name) {
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            offset += written
        }
    }

    /// Writes `text` as UTF-8 to `descriptor` (`write`), unbuffered.
    package static func write(_ text: String, toDescriptor descriptor: Int32, name: String) throws {
        var text = text
        try text.withUTF8 { try writeAll(UnsafeRawBufferPointer($0), to: descriptor, name: name) }
    }

    /// Writes the bytes of `secret` to `descriptor` (`write`), without copying them elsewhere.
    package static func write(_ secret: SecretBytes, toDescriptor descriptor: Int32, name: String) throws {
        try secret.withUnsafeBytes { try writeAll($0, to: descriptor, name: name) }
    }

    /// Ends the process with `status` (`exit`).
    package static func exitProcess(_ status: Int32) -> Never { exit(status) }

    /// Ends the process at once (`_exit`): no exit handlers, for when another thread
    /// is stuck inside a library that exit handlers could touch.
    package static func exitImmediately(_ status: Int32) -> Never { _exit(status) }

    /// Whether `descriptor` is a terminal (`isatty`).
    package static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// Reads bytes from `descriptor` (`read`) into zeroing memory until end of
    /// input (`untilEnd`) or a newline (not kept), writing `prompt` to standard
    /// error first (after echo is off, when it is switched off). With `echoOff`, terminal echo is
    /// switched off (`tcgetattr`/`tcsetattr`) while reading and restored after.
    /// - Returns: the bytes, and whether input ended before any byte was read.
    /// - Throws: `.invalidInput` when the input exceeds `limit`; `.io` on a read failure.
    package static func readSecretLine(
        from descriptor: Int32, limit: Int, echoOff: Bool, untilEnd: Bool, prompt: String? = nil
    ) throws -> (secret: SecretBytes, atEnd: Bool) {
        var saved = termios()
        let restoreEcho = echoOff && tcgetattr(descriptor, &saved) == 0
        if restoreEcho {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            try check("tcsetattr", path: "terminal") { tcsetattr(descriptor, TCSAFLUSH, &quiet) }
        }
        defer { if restoreEcho { _ = tcsetattr(descriptor, TCSAFLUSH, &saved) } }
        // The prompt comes only once echo is off, so nothing typed after it is ever shown.
        if let prompt {
            try write(prompt, toDescriptor: 2, name: "standard error")
        }
        var buffer = Sodium.Buffer(count: 256, guarded: false) { _ in }
        var length = 0
        var sawEnd = false
        var chunk = Sodium.Buffer(count: untilEnd ? 4096 : 1, guarded: false) { _ in }
        reading: while true {
            let count = try chunk.withUnsafeBytes { bytes in
                try check("read", path: "file descriptor \(descriptor)") {
                    read(descriptor, UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count)
                }
            }
            if count == 0 {
                sawEnd = true
                break
            }
            for offset in 0..<count {
                let byte = chunk.withUnsafeBytes { $0[offset] }
                if byte == UInt8(ascii: "\n") && !untilEnd { break reading }
                guard length < limit else {
                    throw LatchkeyError(
                        .invalidInput, "input on file descriptor \(descriptor) is longer than \(limit) bytes")
                }
                if length == buffer.count {
                    let old = buffer
                    buffer = Sodium.Buffer(count: min(old.count * 2, limit), guarded: false) { grown in
                        old.withUnsafeBytes { grown.copyMemory(from: $0) }
                    }
                }
                buffer.store(byte, at: length)
                length += 1
            }
        }
        chunk = Sodium.Buffer(count: 0, guarded: false) { _ in }
        let secret = buffer.withUnsafeBytes { SecretBytes(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
        return (secret, sawEnd && length == 0)
    }
}

extension POSIX {
    /// How many secrets the process holds, whether the app asked for the process
    /// to be kept from dumps while it holds any (``guardDumpsWhileHoldingSecrets()``),
    /// and whether it was dumpable before the first of them (so the last one
    /// restores that and never more).
    private static let heldSecrets = Mutex<(count: Int, guarding: Bool, restoreDumpable: Bool)>((0, false, false))

    /// From now on, the process is not dumpable (`prctl(PR_SET_DUMPABLE, 0)`)
    /// while it holds a secret: no core dump can write one to disk, and other
    /// processes of the user cannot attach to it or read its memory. Applies at
    /// once when secrets are already held. Until an app calls this, the library
    /// leaves the dumpable flag alone.
    static func guardDumpsWhileHoldingSecrets() {
        heldSecrets.withLock { state in
            guard !state.guarding else { return }
            state.guarding = true
            if state.count > 0 { forbidDumpsForHeldSecrets(&state) }
        }
    }

    private static func forbidDumpsForHeldSecrets(_ state: inout (count: Int, guarding: Bool, restoreDumpable: Bool)) {
        state.restoreDumpable = latchkey_get_dumpable() == 1
        if state.restoreDumpable {
            // PR_SET_DUMPABLE fails only for a value other than 0 or 1.
            precondition(latchkey_set_dumpable(0) == 0, "prctl(PR_SET_DUMPABLE, 0) failed")
        }
    }

    /// Notes that a secret is now in memory. While guarding, the first one makes
    /// the process not dumpable.
    static func secretAcquired() {
        heldSecrets.withLock { state in
            if state.count == 0 && state.guarding { forbidDumpsForHeldSecrets(&state) }
            state.count += 1
        }
    }

    /// Notes that a secret was zeroed and released. When the last one goes, the
    /// process is made dumpable again (`prctl(PR_SET_DUMPABLE, 1)`) if it was
    /// before the first.
    static func secretReleased() {
        heldSecrets.withLock { state in
            precondition(state.count > 0, "more secrets released than acquired")
            state.count -= 1
            if state.count == 0 && state.restoreDumpable {
                precondition(latchkey_set_dumpable(1) == 0, "prctl(PR_SET_DUMPABLE, 1) failed")
                state.restoreDumpable = false
            }
        }
    }

    /// Whether the process may be dumped (`prctl(PR_GET_DUMPABLE)` is not 0).
    package static var isDumpable: Bool { latchkey_get_dumpable() != 0 }
}

extension POSIX.Status {
    /// The name of a file type (`st_mode & S_IFMT`), for messages.
    private static func typeName(_ type: mode_t) -> String {
        switch type {
        case S_IFREG: "regular file"
        case S_IFDIR: "directory"
        case S_IFLNK: "symbolic link"
        case S_IFIFO: "FIFO"
        case S_IFCHR: "character device"
        case S_IFBLK: "block device"
        case S_IFSOCK: "socket"
        default: "special file"
        }
    }

    fileprivate init(_ info: stat) {
        let type = info.st_mode & S_IFMT
        self.init(
            permissions: UInt32(info.st_mode & 0o7777),
            owner: UInt32(info.st_uid),
            isDirectory: type == S_IFDIR,
            isRegularFile: type == S_IFREG,
            isSymbolicLink: type == S_IFLNK,
            typeName: Self.typeName(type),
            size: Int(info.st_size),
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }
}

extension POSIX {
    /// A Unix-domain stream socket (`AF_UNIX`, `SOCK_STREAM`), closed when released:
    /// the agent's listening socket and each connection to it. Every wait has a
    /// deadline (`poll`), so a peer that stalls cannot hold a caller.
    package final class LocalSocket: @unchecked Sendable {
        // Sendable: the descriptor is immutable; the kernel serialises calls on it.
        private let descriptor: Int32
        /// The socket's path, for messages.
        package let path: String

        private init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        deinit { close(descriptor) }

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

        /// A socket bound to `path` (which must not exist) and listening, made 0600 (`chmod`).
        /// - Throws: `.cannotCreate` or `.io` naming the failing call.
        package static func listening(at path: String, backlog: Int32 = 64) throws -> LocalSocket {
            let socket = LocalSocket(descriptor: try newSocket(path: path), path: path)
            var address = try address(path)
            try check("bind", path: path) {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            try check("chmod", path: path) { chmod(path, 0o600) }
            try check("listen", path: path) { listen(socket.descriptor, backlog) }
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
                let result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                if result == 0 { return socket }
                let code = errno
                if code == EINTR { continue }
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
                let connection = Glibc.accept(descriptor, nil, nil)
                if connection >= 0 {
                    _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                    return LocalSocket(descriptor: connection, path: path)
                }
                let code = errno
                if [EINTR, ECONNABORTED, EPROTO].contains(code) { continue }
                throw error(errno: code, function: "accept", path: path)
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
            while true {
                let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
                if count > 0 { return .bytes }
                if count == 0 { return .closed }
                let code = errno
                if code == EINTR { continue }
                return code == EAGAIN || code == EWOULDBLOCK ? .nothing : .closed
            }
        }

        /// The user id of the process at the other end (`SO_PEERCRED`), as the
        /// kernel recorded it when the connection was made.
        package func peerUserID() throws -> UInt32 {
            var uid: UInt32 = 0
            try check("getsockopt", path: path) { latchkey_peer_uid(descriptor, &uid) }
            return uid
        }

        /// Sends all of `bytes` (`send`, never raising SIGPIPE) before `deadline`.
        /// - Throws: `.timedOut` when the peer does not take them in time; `.io`
        ///   when the connection is gone.
        package func send(_ bytes: UnsafeRawBufferPointer, before deadline: ContinuousClock.Instant) throws {
            var offset = 0
            while offset < bytes.count {
                guard try wait(for: Int16(POLLOUT), until: deadline) else {
                    throw LatchkeyError(.timedOut, "\(path): the peer did not take the message in time")
                }
                let sent = Glibc.send(
                    descriptor, bytes.baseAddress! + offset, bytes.count - offset,
                    Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                if sent < 0 {
                    let code = errno
                    if code == EINTR || code == EAGAIN { continue }
                    throw error(errno: code, function: "send", path: path)
                }
                offset += sent
            }
        }

        /// Receives exactly `buffer.count` bytes before `deadline`.
        /// - Returns: false when the peer closed the connection before the first byte.
        /// - Throws: `.timedOut` when the bytes do not come in time; `.invalidInput`
        ///   when the peer closed the connection part-way; `.io`.
        package func receive(into buffer: UnsafeMutableRawBufferPointer, before deadline: ContinuousClock.Instant)
            throws -> Bool
        {
            var offset = 0
            while offset < buffer.count {
                guard try wait(for: Int16(POLLIN), until: deadline) else {
                    throw LatchkeyError(.timedOut, "\(path): the peer did not send the whole message in time")
                }
                var count = recv(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_DONTWAIT))
                if count < 0 {
                    let code = errno
                    if code == EINTR || code == EAGAIN { continue }
                    // A peer that closed with input unread resets the connection: it is closed all the same.
                    guard code == ECONNRESET else { throw error(errno: code, function: "recv", path: path) }
                    count = 0
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
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var ending = sigset_t()
        sigemptyset(&ending)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGTERM] { sigaddset(&ending, signal) }
        posix_spawnattr_setsigdefault(&attributes, &ending)
        posix_spawnattr_setflags(
            &attributes, Int16(LATCHKEY_POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
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
        let log = try check("open", path: logPath) {
            Glibc.open(logPath, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        defer { close(log) }
        try check("dup2", path: logPath) { dup2(log, 2) }
    }

    /// Opens `/dev/null` on each of the standard descriptors 0, 1 and 2 that is
    /// closed (`fcntl(F_GETFD)` fails with `EBADF`), so that no socket or file the
    /// process opens later lands on one and receives what is meant for the stream.
    /// Descriptor 0 is opened write-only and 1 and 2 read-only, so reading or
    /// writing the stream still fails with `EBADF`, as it would have closed.
    package static func openClosedStandardDescriptors() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let null = Glibc.open("/dev/null", (descriptor == 0 ? O_WRONLY : O_RDONLY))
            if null >= 0 && null != descriptor {
                _ = dup2(null, descriptor)
                close(null)
            }
        }
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

    /// Makes this process never dumpable for the rest of its life: no core file
    /// (`setrlimit(RLIMIT_CORE, 0)`), and `prctl(PR_SET_DUMPABLE, 0)`, so other
    /// processes of the same user cannot attach to it or read its memory.
    package static func forbidDumps() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        heldSecrets.withLock { state in
            precondition(latchkey_set_dumpable(0) == 0, "prctl(PR_SET_DUMPABLE, 0) failed")
            state.restoreDumpable = false
        }
    }
}

extension POSIX {
    /// Waits for `duration` (`nanosleep`, resumed after a signal).
    package static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Runs `body` on a new thread of its own (`pthread_create`, detached), for
    /// work that waits in system calls and so must not hold one of Dispatch's.
    /// - Throws: `.io` when no thread can be made.
    package static func startThread(_ body: @escaping @Sendable () -> Void) throws {
        final class Work {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { work in
                Unmanaged<Work>.fromOpaque(work!).takeRetainedValue().body()
                return nil
            }, work)
        guard result == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            throw LatchkeyError(
                .io, "cannot start a thread (\(String(cString: strerror(result))))", cFunction: "pthread_create")
        }
        pthread_detach(thread)
    }
}
