internal import Glibc

// The POSIX calls of the library, split by concern: this file (the namespace,
// the one place errno becomes a `LatchkeyError`, the environment and the
// process), `POSIX+File.swift` (an open file), `POSIX+Paths.swift` (calls on
// paths and directories), `POSIX+Streams.swift` (descriptors read and written
// whole) and `POSIX+Process.swift` (threads, sleeping and dumps). Sockets,
// process spawning and the terminal are the tools' (the LatchkeySystem target's
// `Internals/Glibc.swift`). Nothing outside sees a raw descriptor's C API or errno.

/// Thin, internal wrappers over the POSIX calls Latchkey needs.
package enum POSIX {
    /// What `stat` reports about a path, in the parts Latchkey uses.
    package struct Status: Equatable, Sendable {
        /// Permission bits (the low 12 bits of `st_mode`).
        package var permissions: UInt32
        /// The owner's user id.
        package var owner: UInt32
        /// Whether the path is a directory.
        package var isDirectory: Bool
        /// Whether the path is a regular file.
        package var isRegularFile: Bool
        /// Whether the path is a symbolic link (only `lstat` reports one).
        package var isSymbolicLink: Bool
        /// The kind of file in words, for messages: `regular file`, `directory`,
        /// `symbolic link`, `FIFO`, `character device`, `block device` or `socket`.
        package var typeName: String
        /// Size in bytes.
        package var size: Int
        /// Device and inode, which identify the file.
        package var device: UInt64
        package var inode: UInt64
        /// Last modification, in nanoseconds since the epoch.
        package var modified: Int64
    }

    /// The errno value of a failed call.
    package struct Errno: Error, Equatable, Sendable {
        /// The value (`EINTR`, `ENOENT`, ...).
        package let code: Int32
    }

    /// Runs `call`, again for as long as it fails with `EINTR` when `retryOnInterrupt`,
    /// and returns its result, or the errno of its failure (a negative result): the one
    /// place Latchkey's targets read errno and retry an interrupted call
    /// (the model is swift-system's `valueOrErrno(retryOnInterrupt:)`).
    package static func valueOrErrno<T: BinaryInteger>(
        retryOnInterrupt: Bool = true, _ call: () -> T
    ) -> Result<T, Errno> {
        while true {
            let result = call()
            if result >= 0 { return .success(result) }
            let code = errno
            if retryOnInterrupt && code == EINTR { continue }
            return .failure(Errno(code: code))
        }
    }

    /// Runs `call` as ``valueOrErrno(retryOnInterrupt:_:)`` does and converts a
    /// failure into a `LatchkeyError` naming `function` and `path`.
    @discardableResult
    package static func check<T: BinaryInteger>(_ function: String, path: String, _ call: () -> T) throws -> T {
        switch valueOrErrno(call) {
        case .success(let value): return value
        case .failure(let failure): throw error(errno: failure.code, function: function, path: path)
        }
    }

    /// The `LatchkeyError` for an errno value.
    package static func error(errno code: Int32, function: String, path: String) -> LatchkeyError {
        let message = "\(path): \(describe(errno: code))"
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

    /// What an errno value means, in words (`strerror`).
    package static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
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

    /// Ends the process with `status` (`exit`).
    package static func exitProcess(_ status: Int32) -> Never { exit(status) }

    /// Ends the process at once (`_exit`): no exit handlers, for when another thread
    /// is stuck inside a library that exit handlers could touch.
    package static func exitImmediately(_ status: Int32) -> Never { _exit(status) }
}
