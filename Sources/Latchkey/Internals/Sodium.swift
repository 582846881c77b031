internal import CLatchkeySodium
import Synchronization

// Every call into libsodium lives in this file. Nothing outside it sees an
// unsafe pointer that libsodium produced or a libsodium constant.

/// Thin, internal wrappers over libsodium, named after the C functions they call.
package enum Sodium {
    /// Runs `sodium_init` exactly once per process.
    ///
    /// A negative result means the library cannot provide secure randomness; no
    /// cryptography may run after that, so it stops the process.
    static let initialized: Void = {
        let result = sodium_init()
        precondition(result >= 0, "sodium_init failed (\(result)); no secure random source is available")
    }()

    // MARK: Randomness

    /// Random bytes from `randombytes_buf`.
    package static func randomBytes(count: Int) -> [UInt8] {
        _ = initialized
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }

    /// A random secret from `randombytes_buf`, written straight into zeroing memory.
    static func randomSecret(count: Int) -> SecretBytes {
        _ = initialized
        return SecretBytes(count: count, guarded: true) { out in
            if let base = out.baseAddress { randombytes_buf(base, out.count) }
        }
    }

    // MARK: Memory

    /// Zeroes memory with `sodium_memzero`, which the compiler may not optimise away.
    static func memzero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    /// Constant-time comparison of two equally long buffers with `sodium_memcmp`.
    static func constantTimeEqual(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.count > 0, let l = lhs.baseAddress, let r = rhs.baseAddress else { return true }
        return sodium_memcmp(l, r, lhs.count) == 0
    }

    /// Memory owned by one object, zeroed before it is released.
    ///
    /// Guarded buffers come from `sodium_malloc` (guard pages, `mlock`, canary) and
    /// suit long-lived keys; ordinary buffers come from the heap and are zeroed with
    /// `sodium_memzero`, which keeps thousands of small values cheap. Each non-empty
    /// buffer is counted (``POSIX/secretAcquired()``), so that an app that opted in
    /// (``MemoryProtection``) is not dumpable while any lives.
    final class Buffer: @unchecked Sendable {
        // Sendable: the bytes are written only during `init` and read-only after it.
        private let base: UnsafeMutableRawPointer?
        let count: Int
        private let guarded: Bool
        /// The guarded block `base` lies in, when it came from ``GuardedBlocks``.
        private let block: UnsafeMutableRawPointer?

        init(count: Int, guarded: Bool, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
            _ = Sodium.initialized
            precondition(count >= 0, "negative secret length")
            self.count = count
            if count == 0 {
                (base, block, self.guarded) = (nil, nil, false)
            } else if guarded, let block = GuardedBlocks.shared.take(count: count) {
                // The secret ends where the block does, against its guard page, as with sodium_malloc.
                (base, self.block, self.guarded) = (block + (GuardedBlocks.capacity - count), block, true)
            } else if guarded, let memory = sodium_malloc(count) {
                (base, block, self.guarded) = (memory, nil, true)
            } else {
                (base, block, self.guarded) = (
                    UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16), nil, false
                )
            }
            if count > 0 { POSIX.secretAcquired() }
            do {
                try initialize(UnsafeMutableRawBufferPointer(start: base, count: count))
            } catch {
                release()
                throw error
            }
        }

        deinit { release() }

        private var released = false

        private func release() {
            guard !released else { return }
            released = true
            let buffer = UnsafeMutableRawBufferPointer(start: base, count: count)
            Sodium.memzero(buffer)
            #if LATCHKEY_TEST_SEAMS
                if let observer = SecretBytes.releaseObserver {
                    observer(buffer.elementsEqual(repeatElement(0, count: count)), count)
                }
            #endif
            guard let base else { return }
            if let block {
                GuardedBlocks.shared.give(back: block)
            } else if guarded {
                sodium_free(base)
            } else {
                base.deallocate()
            }
            POSIX.secretReleased()
        }

        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try body(UnsafeRawBufferPointer(start: base, count: count))
        }

        /// Writes one byte; only for buffers still being filled by their single owner.
        func store(_ byte: UInt8, at offset: Int) {
            precondition(offset >= 0 && offset < count, "secret buffer index out of range")
            base!.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
        }
    }

    /// Guarded blocks of one page (`sodium_malloc`: guard pages, a canary, `mlock`,
    /// not in core dumps) kept for reuse once their secret is zeroed, so that a
    /// short-lived secret costs no `mmap`, `mprotect`, `mlock`, `munlock` and `munmap`
    /// of its own: they were about a fifth of the agent's processor time on a
    /// `session get` (7 of those calls per secret, and `mprotect` and `munmap` make the
    /// kernel flush the other threads' address translations). A secret ends against
    /// the block's trailing guard page, as with `sodium_malloc`; the canary sits at the
    /// start of the block. At most `kept` blocks stay mapped (locked memory is
    /// limited); a longer secret gets a block of its own.
    final class GuardedBlocks: Sendable {
        /// The blocks every ``Buffer`` uses.
        static let shared = GuardedBlocks(kept: 16)
        /// The bytes a block holds: one page with libsodium's 16-byte canary before it.
        static let capacity = 4096 - 16
        let kept: Int
        /// The free blocks (addresses: each block is used by one buffer at a time).
        private let free = Mutex<[UInt]>([])

        init(kept: Int) { self.kept = kept }

        /// How many free blocks are kept now.
        var count: Int { free.withLock { $0.count } }

        /// A free block (or a new one) for a secret of `count` bytes; nil when it does not fit.
        func take(count: Int) -> UnsafeMutableRawPointer? {
            guard count <= Self.capacity else { return nil }
            _ = Sodium.initialized
            if let address = free.withLock({ $0.popLast() }) { return UnsafeMutableRawPointer(bitPattern: address) }
            return sodium_malloc(Self.capacity)
        }

        /// Keeps a block whose secret was zeroed, or frees it when enough are kept.
        func give(back block: UnsafeMutableRawPointer) {
            let isKept = free.withLock { blocks in
                guard blocks.count < kept else { return false }
                blocks.append(UInt(bitPattern: block))
                return true
            }
            if !isKept { sodium_free(block) }
        }
    }

    /// Calls `body` with a non-null pointer to `bytes`, even when `bytes` is empty,
    /// for the libsodium parameters declared nonnull.
    private static func nonNull<R>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafePointer<UInt8>) -> R) -> R {
        if let base = bytes.baseAddress { return body(base.assumingMemoryBound(to: UInt8.self)) }
        let placeholder: [UInt8] = [0]
        return placeholder.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    // MARK: Authenticated encryption (XChaCha20-Poly1305, IETF construction)

    package static let aeadKeyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    static let aeadNonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let aeadTagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// Encrypts with `crypto_aead_xchacha20poly1305_ietf_encrypt` under a fresh random nonce.
    /// - Returns: the nonce and the ciphertext (message plus 16-byte tag).
    package static func seal(_ plaintext: SecretBytes, additionalData: [UInt8], key: SecretBytes) -> (
        nonce: [UInt8], ciphertext: [UInt8]
    ) {
        precondition(key.count == aeadKeyLength, "XChaCha20-Poly1305 needs a 32-byte key")
        let nonce = randomBytes(count: aeadNonceLength)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + aeadTagLength)
        var written: UInt64 = 0
        let result = plaintext.withUnsafeBytes { message in
            key.withUnsafeBytes { k in
                nonNull(message) { m in
                    crypto_aead_xchacha20poly1305_ietf_encrypt(
                        &ciphertext, &written, m, UInt64(message.count),
                        additionalData, UInt64(additionalData.count),
                        nil, nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        precondition(
            result == 0 && Int(written) == ciphertext.count, "crypto_aead_xchacha20poly1305_ietf_encrypt failed")
        return (nonce, ciphertext)
    }

    /// Decrypts and authenticates with `crypto_aead_xchacha20poly1305_ietf_decrypt`.
    /// - Returns: the plaintext, or nil when the tag does not verify (wrong key or altered data).
    package static func open(
        _ ciphertext: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>, additionalData: ArraySlice<UInt8>, key: SecretBytes
    ) -> SecretBytes? {
        guard key.count == aeadKeyLength, nonce.count == aeadNonceLength, ciphertext.count >= aeadTagLength else {
            return nil
        }
        var ok = false
        let plaintext = SecretBytes(count: ciphertext.count - aeadTagLength) { out in
            var written: UInt64 = 0
            var placeholder: [UInt8] = [0]
            let result = ciphertext.withUnsafeBytes { c in
                nonce.withUnsafeBytes { n in
                    additionalData.withUnsafeBytes { ad in
                        key.withUnsafeBytes { k in
                            placeholder.withUnsafeMutableBufferPointer { spare in
                                nonNull(UnsafeRawBufferPointer(ad)) { adPointer in
                                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                                        out.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? spare.baseAddress!,
                                        &written, nil,
                                        c.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(c.count),
                                        adPointer, UInt64(ad.count),
                                        n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                                }
                            }
                        }
                    }
                }
            }
            ok = result == 0 && Int(written) == out.count
        }
        return ok ? plaintext : nil
    }

    // MARK: Password hashing (Argon2id)

    package static let pwhashSaltLength = Int(crypto_pwhash_SALTBYTES)
    static let pwhashMinimumOps = UInt64(crypto_pwhash_OPSLIMIT_MIN)
    static let pwhashMinimumMemory = Int(crypto_pwhash_MEMLIMIT_MIN)
    static let pwhashInteractiveOps = UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE)
    static let pwhashInteractiveMemory = Int(crypto_pwhash_MEMLIMIT_INTERACTIVE)

    /// Derives a key from a passphrase with `crypto_pwhash` (Argon2id v1.3).
    /// - Throws: `LatchkeyError` `.internal` when libsodium refuses (out of memory, parameters out of range).
    package static func deriveKey(
        length: Int, passphrase: SecretBytes, salt: [UInt8], opsLimit: UInt64, memoryLimit: Int
    )
        throws -> SecretBytes
    {
        precondition(salt.count == pwhashSaltLength, "Argon2id needs a 16-byte salt")
        precondition(length >= 16, "derived keys are at least 16 bytes")
        var result: Int32 = 0
        let emptyPassphrase: [CChar] = [0]
        let key = SecretBytes(count: length, guarded: true) { out in
            result = passphrase.withUnsafeBytes { p in
                emptyPassphrase.withUnsafeBufferPointer { empty in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(length),
                        p.baseAddress?.assumingMemoryBound(to: CChar.self) ?? empty.baseAddress!, UInt64(p.count),
                        salt, opsLimit, memoryLimit, crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard result == 0 else {
            throw LatchkeyError(
                .internal, "key derivation failed (out of memory or parameters out of range)",
                cFunction: "crypto_pwhash")
        }
        return key
    }

    // MARK: Keyed hashing (BLAKE2b)

    static let genericHashKeyLength = Int(crypto_generichash_KEYBYTES)

    /// A keyed BLAKE2b digest from `crypto_generichash`.
    /// - Parameter length: 16 to 64 bytes.
    static func keyedHash(_ message: [UInt8], key: SecretBytes, length: Int = 32) -> [UInt8] {
        _ = initialized
        precondition((Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(length))
        var digest = [UInt8](repeating: 0, count: length)
        let result = key.withUnsafeBytes { k in
            crypto_generichash(
                &digest, length, message, UInt64(message.count),
                k.baseAddress?.assumingMemoryBound(to: UInt8.self), k.count)
        }
        precondition(result == 0, "crypto_generichash failed")
        return digest
    }

    /// A keyed BLAKE2b digest of a secret's bytes from `crypto_generichash`, read in place
    /// (no copy of the secret outside its zeroing memory).
    /// - Parameter length: 16 to 64 bytes.
    static func keyedHash(of secret: SecretBytes, key: SecretBytes, length: Int = 32) -> [UInt8] {
        _ = initialized
        precondition((Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(length))
        var digest = [UInt8](repeating: 0, count: length)
        let result = secret.withUnsafeBytes { m in
            key.withUnsafeBytes { k in
                crypto_generichash(
                    &digest, length, m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                    k.baseAddress?.assumingMemoryBound(to: UInt8.self), k.count)
            }
        }
        precondition(result == 0, "crypto_generichash failed")
        return digest
    }

    /// An unkeyed BLAKE2b digest from `crypto_generichash`, for detecting accidental damage.
    /// - Parameter length: 16 to 64 bytes.
    static func hash(_ message: ArraySlice<UInt8>, length: Int) -> [UInt8] {
        _ = initialized
        precondition((Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(length))
        var digest = [UInt8](repeating: 0, count: length)
        let result = message.withUnsafeBufferPointer { m in
            crypto_generichash(&digest, length, m.baseAddress, UInt64(m.count), nil, 0)
        }
        precondition(result == 0, "crypto_generichash failed")
        return digest
    }

    /// An unkeyed BLAKE2b digest of a secret's bytes from `crypto_generichash`, read
    /// in place (no copy of the secret outside its zeroing memory).
    /// - Parameter length: 16 to 64 bytes.
    static func hash(_ secret: SecretBytes, length: Int) -> [UInt8] {
        _ = initialized
        precondition((Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(length))
        var digest = [UInt8](repeating: 0, count: length)
        let result = secret.withUnsafeBytes { m in
            crypto_generichash(
                &digest, length, m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count), nil, 0)
        }
        precondition(result == 0, "crypto_generichash failed")
        return digest
    }

    /// A keyed BLAKE2b digest from `crypto_generichash`, written straight into
    /// zeroing memory, for deriving a subkey from a key.
    /// - Parameter length: 16 to 64 bytes.
    static func keyedHashSecret(_ message: [UInt8], key: SecretBytes, length: Int = 32) -> SecretBytes {
        _ = initialized
        precondition((Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(length))
        precondition((Int(crypto_generichash_KEYBYTES_MIN)...Int(crypto_generichash_KEYBYTES_MAX)).contains(key.count))
        var result: Int32 = 0
        let digest = SecretBytes(count: length, guarded: true) { out in
            result = key.withUnsafeBytes { k in
                crypto_generichash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), length,
                    message, UInt64(message.count),
                    k.baseAddress?.assumingMemoryBound(to: UInt8.self), k.count)
            }
        }
        precondition(result == 0, "crypto_generichash failed")
        return digest
    }
}
