internal import Glibc

// Calls on paths and directories: what a path is, making, renaming, linking and
// removing, and flushing a directory's entries.

extension POSIX {
    /// What `lstat` reports about `path`, or nil when it does not exist.
    package static func status(of path: String) throws -> Status? {
        var info = stat()
        switch valueOrErrno({ lstat(path, &info) }) {
        case .success: return Status(info)
        case .failure(let failure) where failure.code == ENOENT || failure.code == ENOTDIR: return nil
        case .failure(let failure): throw error(errno: failure.code, function: "lstat", path: path)
        }
    }

    /// What `fstat` reports about an open descriptor.
    package static func status(ofDescriptor descriptor: Int32, name: String) throws -> Status {
        var info = stat()
        try check("fstat", path: name) { fstat(descriptor, &info) }
        return Status(info)
    }

    /// Creates a directory with `permissions` (`mkdir`); an existing one is left as it is.
    static func makeDirectory(_ path: String, permissions: UInt32) throws {
        switch valueOrErrno({ mkdir(path, mode_t(permissions)) }) {
        case .success: return
        case .failure(let failure) where failure.code == EEXIST: return
        case .failure(let failure) where failure.code == ENOTDIR:
            // A parent is a file: nothing can be created there (not "not found").
            throw LatchkeyError(.cannotCreate, "\(path): a parent is not a directory", cFunction: "mkdir")
        case .failure(let failure): throw error(errno: failure.code, function: "mkdir", path: path)
        }
    }

    /// Renames `source` over `destination` atomically (`rename`).
    package static func rename(_ source: String, to destination: String) throws {
        try check("rename", path: destination) { Glibc.rename(source, destination) }
    }

    /// Gives `source` a second name `destination` (`link`) unless `destination`
    /// exists: an atomic "create if absent".
    /// - Returns: false when `destination` already existed (`EEXIST`).
    static func link(_ source: String, to destination: String) throws -> Bool {
        switch valueOrErrno({ Glibc.link(source, destination) }) {
        case .success: return true
        case .failure(let failure) where failure.code == EEXIST: return false
        case .failure(let failure): throw error(errno: failure.code, function: "link", path: destination)
        }
    }

    /// Removes a file (`unlink`); a missing file is not an error.
    package static func removeFile(_ path: String) throws {
        switch valueOrErrno({ unlink(path) }) {
        case .success: return
        case .failure(let failure) where failure.code == ENOENT: return
        case .failure(let failure): throw error(errno: failure.code, function: "unlink", path: path)
        }
    }

    /// Removes a directory when it is empty (`rmdir`); a directory that still
    /// holds entries, or none at all, is left as it is.
    static func removeDirectoryIfEmpty(_ path: String) throws {
        switch valueOrErrno({ rmdir(path) }) {
        case .success: return
        case .failure(let failure) where [ENOTEMPTY, EEXIST, ENOENT].contains(failure.code): return
        case .failure(let failure): throw error(errno: failure.code, function: "rmdir", path: path)
        }
    }

    /// Flushes a directory's entries to the disk (`open` + `fsync`), so a rename
    /// or an unlink inside it survives a crash.
    package static func syncDirectory(_ path: String) throws {
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

    init(_ info: stat) {
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
