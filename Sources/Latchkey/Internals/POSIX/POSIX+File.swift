internal import Glibc

extension POSIX {
    /// An open file descriptor, closed when the owner is released.
    package final class File: @unchecked Sendable {
        // Sendable: the descriptor is immutable; the kernel serialises calls on it.
        let descriptor: Int32
        /// The file's path, for messages.
        package let path: String

        private init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        deinit { close(descriptor) }

        /// How to open a file.
        package enum Mode {
            /// Read only; the file must exist.
            case read
            /// Read and write; the file must exist.
            case readWrite
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
        package static func open(_ path: String, _ mode: Mode) throws -> File {
            var flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
            var permissions: mode_t = 0
            switch mode {
            case .read:
                flags |= O_RDONLY
            case .readWrite:
                flags |= O_RDWR
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
        package func readAll(limit: Int, what: String = "such a file") throws -> [UInt8] {
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
        package func writeAll(_ bytes: [UInt8]) throws {
            try bytes.withUnsafeBytes { try POSIX.writeAll($0, to: descriptor, name: path) }
        }

        /// Writes all bytes of a secret (`write`), continuing after short writes.
        func writeAll(_ secret: SecretBytes) throws {
            try secret.withUnsafeBytes { try POSIX.writeAll($0, to: descriptor, name: path) }
        }

        /// Flushes data and metadata to the disk (`fsync`).
        package func sync() throws {
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
        package func truncate(to length: Int) throws {
            try POSIX.check("ftruncate", path: path) { ftruncate(descriptor, off_t(length)) }
        }

        /// Takes an exclusive `flock` on the file unless another open file holds one.
        /// - Returns: false when another holder has it (`EWOULDBLOCK`).
        package func tryLockExclusively() throws -> Bool {
            switch POSIX.valueOrErrno({ flock(descriptor, LOCK_EX | LOCK_NB) }) {
            case .success: return true
            case .failure(let failure) where failure.code == EWOULDBLOCK: return false
            case .failure(let failure): throw POSIX.error(errno: failure.code, function: "flock", path: path)
            }
        }

        /// Waits for an exclusive lock on the whole file (`flock(LOCK_EX)`); it
        /// is released when the descriptor is closed.
        func lockExclusively() throws {
            try POSIX.check("flock", path: path) { flock(descriptor, LOCK_EX) }
        }

        /// Reads up to `count` bytes starting at `offset` (`pread`); fewer only at the end of the file.
        package func read(upTo count: Int, at offset: Int) throws -> [UInt8] {
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
        package func status() throws -> Status {
            var info = stat()
            try POSIX.check("fstat", path: path) { fstat(descriptor, &info) }
            return Status(info)
        }
    }
}
