/// Secret bytes: a password, a token, a key.
///
/// The memory is zeroed (`sodium_memzero`) when the last copy is released,
/// equality is constant-time (`sodium_memcmp`), and neither `description`,
/// string interpolation, `debugDescription` nor `dump` shows the bytes. The bytes
/// are reached only inside ``withUnsafeBytes(_:)``.
///
/// `SecretBytes` is immutable; copies share one zeroing buffer. It lives on the
/// ordinary heap, which is not locked (see ``MemoryProtection``), except the
/// secrets from ``random(count:)`` and the keys the library derives.
public struct SecretBytes: Sendable {
    let buffer: Sodium.Buffer

    /// Creates a secret of `count` bytes that `initializer` writes in place.
    ///
    /// - Parameters:
    ///   - count: The number of bytes.
    ///   - guarded: Whether to use libsodium's guarded allocation (`sodium_malloc`),
    ///     for long-lived keys.
    ///   - initializer: Writes all `count` bytes.
    package init(
        count: Int, guarded: Bool = false, initializingWith initializer: (UnsafeMutableRawBufferPointer) throws -> Void
    ) rethrows {
        buffer = try Sodium.Buffer(count: count, guarded: guarded, initialize: initializer)
    }

    /// Creates a secret holding a copy of `bytes`.
    ///
    /// The caller remains responsible for the memory behind `bytes`; prefer
    /// reading secrets straight into a `SecretBytes` where possible.
    /// - Parameter bytes: The secret's bytes.
    public init(_ bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { out in
            _ = out.initializeMemory(as: UInt8.self, from: bytes)
        }
    }

    /// Creates a secret holding a copy of `bytes`: the generic initializer for an array,
    /// without its generic entry point, whose first call from another module costs a
    /// command-line process about 170,000 instructions of type lookups (the agent client's path).
    /// - Parameter bytes: The secret's bytes.
    package init(_ bytes: [UInt8]) {
        self.init(count: bytes.count) { out in
            bytes.withUnsafeBytes { out.copyMemory(from: $0) }
        }
    }

    /// Creates a secret holding the UTF-8 encoding of `string`.
    /// - Parameter string: The secret text, such as a token.
    public init(utf8 string: String) {
        var copy = string
        let bytes = copy.withUTF8 { Array($0) }
        self.init(bytes)
    }

    /// Creates an empty secret.
    public init() {
        self.init(count: 0) { _ in }
    }

    /// The concatenation of `parts`, built in zeroing memory without an
    /// intermediate copy (for wire formats that carry secrets, such as git's
    /// credential protocol).
    /// - Parameter parts: The pieces, in order.
    package init(concatenating parts: [SecretBytes]) {
        self.init(count: parts.reduce(0) { $0 + $1.count }) { out in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + bytes.count]).copyMemory(from: bytes)
                }
                offset += part.count
            }
        }
    }

    /// A new secret of `count` random bytes (`randombytes_buf`).
    /// - Parameter count: The number of bytes.
    /// - Returns: The random secret, in guarded memory.
    public static func random(count: Int) -> SecretBytes {
        Sodium.randomSecret(count: count)
    }

    /// The number of bytes.
    public var count: Int { buffer.count }

    /// Whether the secret has no bytes.
    public var isEmpty: Bool { buffer.count == 0 }

    /// Calls `body` with the secret's bytes.
    ///
    /// The pointer is valid only inside `body`; do not store or return it.
    /// - Parameter body: A closure that reads the bytes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try buffer.withUnsafeBytes(body)
    }

    /// The secret decoded as UTF-8, for the edges where a `String` is required,
    /// or nil when the bytes are not valid UTF-8.
    ///
    /// A `String` cannot be zeroed: keep its lifetime short.
    public func utf8String() -> String? {
        withUnsafeBytes { String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) }
    }

    /// A copy of the bytes as an array, for the edges where one is required.
    ///
    /// An array cannot be zeroed on release: keep its lifetime short.
    public func copyBytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    #if LATCHKEY_TEST_SEAMS
        /// A test seam (only in a build with LATCHKEY_TEST_SEAMS=1, as `make test` makes): when set for the current task, it is
        /// called as every secret buffer is released, with whether the memory read
        /// as all zeros after zeroing and the buffer's length.
        @TaskLocal static var releaseObserver: (@Sendable (_ zeroed: Bool, _ count: Int) -> Void)?
    #endif
}
