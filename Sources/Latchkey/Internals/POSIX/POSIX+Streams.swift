internal import Glibc

// Descriptors read and written whole: a stream or file written to its last
// byte, and a secret read into zeroing memory up to its end or a newline.

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

    /// Reads bytes from `descriptor` (`read`) into zeroing memory until end of
    /// input (`untilEnd`) or a newline (not kept).
    /// - Returns: the bytes, and whether input ended before any byte was read.
    /// - Throws: `.invalidInput` when the input exceeds `limit`; `.io` on a read failure.
    package static func readSecret(
        from descriptor: Int32, limit: Int, untilEnd: Bool
    ) throws -> (secret: SecretBytes, atEnd: Bool) {
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
