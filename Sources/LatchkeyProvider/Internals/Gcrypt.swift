internal import CLatchkeyGcrypt
import Latchkey

// Every libgcrypt call of the provider: the DH session's group arithmetic
// (`gcry_mpi_*`), HKDF-SHA256 over `gcry_md`'s HMAC, and AES-128-CBC (`gcry_cipher`).
// Nothing of the arithmetic or the cipher is written here; errors become `LatchkeyError`
// in `check`, naming the call. libgcrypt is loaded on first use (CLatchkeyGcrypt's
// `latchkey_gcrypt_load`, dlopen): a process that never serves or unlocks the provider
// does not map it; each entry point below loads it first.

enum Gcrypt {
    /// The prime of the 1024-bit MODP group of RFC 2409 (group 2), whose generator is 2.
    private static let primeHex =
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A0879"
        + "8E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B"
        + "0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF"
    /// The prime's length in bytes: every public key and shared secret is written at this length.
    static let primeBytes = 128

    /// Loads and initialises libgcrypt on first use (`latchkey_gcrypt_load`: dlopen of
    /// `libgcrypt.so.20`, dlsym of every function called here, `gcry_check_version` and
    /// `GCRYCTL_INITIALIZATION_FINISHED`), once per process and from any thread; later calls
    /// return the first result.
    /// - Throws: `LatchkeyError` `.unavailable` when libgcrypt is not installed, lacks a
    ///   function or is too old; the message says which.
    static func initialize() throws {
        let (status, reason) = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 512) { buffer in
            buffer.initialize(repeating: 0)
            let status = latchkey_gcrypt_load(buffer.baseAddress, buffer.count)
            return (status, status == 0 ? "" : String(cString: buffer.baseAddress!))
        }
        switch status {
        case 0:
            return
        case LK_GCRYPT_LOAD_NOT_FOUND:
            throw LatchkeyError(.unavailable, "libgcrypt is not installed: \(reason)", cFunction: "dlopen")
        case LK_GCRYPT_LOAD_TOO_OLD:
            throw LatchkeyError(
                .unavailable, "libgcrypt is older than Latchkey needs: \(reason)", cFunction: "gcry_check_version")
        default:
            throw LatchkeyError(.unavailable, "libgcrypt cannot be used: \(reason)", cFunction: "dlsym")
        }
    }

    /// The bits of a private exponent: twice the group's security strength (about 80 bits for
    /// this 1024-bit group) and more, as NIST SP 800-56A asks of a safe-prime group's keys. A
    /// full-length exponent made both exponentiations of a session four times as long for no
    /// more strength: two thirds of the provider's CPU time for a `secret-tool lookup`.
    static let exponentBits = 256

    /// A DH key pair in group 2: a random private exponent of ``exponentBits`` bits (the top
    /// one set) and 2^x mod p (`gcry_mpi_randomize`, `gcry_mpi_powm`).
    /// - Returns: The private exponent and the public key, both `primeBytes` long, big-endian.
    static func keyPair() throws -> (privateKey: SecretBytes, publicKey: SecretBytes) {
        try initialize()
        let prime = try Number(hex: primeHex)
        let exponent = Number()
        lk_gcry_mpi_randomize(exponent.mpi, UInt32(exponentBits), LK_GCRY_STRONG_RANDOM)
        lk_gcry_mpi_set_bit(exponent.mpi, UInt32(exponentBits - 1))
        let generator = Number()
        _ = lk_gcry_mpi_set_ui(generator.mpi, 2)
        let publicKey = Number()
        lk_gcry_mpi_powm(publicKey.mpi, generator.mpi, exponent.mpi, prime.mpi)
        return (try exponent.bytes(), try publicKey.bytes())
    }

    /// The AES-128 key of a DH session: the shared secret peer^x mod p, written at the
    /// prime's length, through HKDF-SHA256 with no salt and no info to 16 bytes.
    /// - Throws: `LatchkeyError` `.invalidInput` for a peer key outside 1 < y < p - 1.
    static func sessionKey(privateKey: SecretBytes, peerPublicKey: SecretBytes) throws -> SecretBytes {
        try initialize()
        let prime = try Number(hex: primeHex)
        let peer = try Number(bytes: peerPublicKey)
        let upper = Number()
        lk_gcry_mpi_sub_ui(upper.mpi, prime.mpi, 1)
        guard lk_gcry_mpi_cmp_ui(peer.mpi, 1) > 0, lk_gcry_mpi_cmp(peer.mpi, upper.mpi) < 0 else {
            throw LatchkeyError(.invalidInput, "the client's DH public key is not in the group")
        }
        let exponent = try Number(bytes: privateKey)
        let shared = Number()
        lk_gcry_mpi_powm(shared.mpi, peer.mpi, exponent.mpi, prime.mpi)
        return try hkdf(try shared.bytes())
    }

    /// The first 16 bytes of HKDF-SHA256 (RFC 5869) of `input` with no salt (a salt of 32 zero
    /// bytes) and no info: one block of the expansion.
    static func hkdf(_ input: SecretBytes) throws -> SecretBytes {
        try initialize()
        let pseudorandomKey = try hmacSHA256(key: SecretBytes([UInt8](repeating: 0, count: 32)), input)
        let block = try hmacSHA256(key: pseudorandomKey, SecretBytes([1]))
        return block.withUnsafeBytes { SecretBytes($0.prefix(16)) }
    }

    /// HMAC-SHA256 of `data` under `key` (`gcry_md_open` with `GCRY_MD_FLAG_HMAC`).
    private static func hmacSHA256(key: SecretBytes, _ data: SecretBytes) throws -> SecretBytes {
        var handle: OpaquePointer?
        try check(
            "gcry_md_open", lk_gcry_md_open(&handle, LK_GCRY_MD_SHA256, LK_GCRY_MD_FLAG_HMAC))
        defer { lk_gcry_md_close(handle) }
        try key.withUnsafeBytes { try check("gcry_md_setkey", lk_gcry_md_setkey(handle, $0.baseAddress, $0.count)) }
        data.withUnsafeBytes { lk_gcry_md_write(handle, $0.baseAddress, $0.count) }
        guard let digest = lk_gcry_md_read(handle, LK_GCRY_MD_SHA256) else {
            throw LatchkeyError(.unavailable, "no digest", cFunction: "gcry_md_read")
        }
        return SecretBytes(UnsafeBufferPointer(start: digest, count: 32))
    }

    /// Encrypts `plaintext` with AES-128-CBC under `key` and a fresh random IV, after
    /// PKCS#7 padding (`gcry_cipher_encrypt`).
    /// - Returns: The IV and the ciphertext.
    static func encrypt(_ plaintext: SecretBytes, key: SecretBytes) throws -> (iv: SecretBytes, ciphertext: SecretBytes)
    {
        try initialize()
        let padding = 16 - plaintext.count % 16
        let padded = SecretBytes(count: plaintext.count + padding) { out in
            plaintext.withUnsafeBytes { out.copyMemory(from: $0) }
            for index in plaintext.count..<out.count { out[index] = UInt8(padding) }
        }
        var iv = [UInt8](repeating: 0, count: 16)
        lk_gcry_create_nonce(&iv, 16)
        let cipher = try Cipher(key: key, iv: iv)
        let ciphertext = try SecretBytes(count: padded.count) { out in
            try padded.withUnsafeBytes { input in
                try check(
                    "gcry_cipher_encrypt",
                    lk_gcry_cipher_encrypt(cipher.handle, out.baseAddress, out.count, input.baseAddress, input.count))
            }
        }
        return (SecretBytes(iv), ciphertext)
    }

    /// Decrypts AES-128-CBC `ciphertext` under `key` and `iv` and removes its PKCS#7 padding
    /// (`gcry_cipher_decrypt`).
    /// - Throws: `LatchkeyError` `.invalidInput` for an IV that is not 16 bytes, a ciphertext that
    ///   is not whole blocks, or padding that is not PKCS#7.
    static func decrypt(_ ciphertext: SecretBytes, key: SecretBytes, iv: SecretBytes) throws -> SecretBytes {
        try initialize()
        guard iv.count == 16, ciphertext.count > 0, ciphertext.count % 16 == 0 else {
            throw LatchkeyError(.invalidInput, "the secret's IV or ciphertext has the wrong length")
        }
        let cipher = try Cipher(key: key, iv: iv.copyBytes())
        let padded = try SecretBytes(count: ciphertext.count) { out in
            try ciphertext.withUnsafeBytes { input in
                try check(
                    "gcry_cipher_decrypt",
                    lk_gcry_cipher_decrypt(cipher.handle, out.baseAddress, out.count, input.baseAddress, input.count))
            }
        }
        return try padded.withUnsafeBytes { bytes in
            let padding = Int(bytes[bytes.count - 1])
            guard (1...16).contains(padding), bytes.suffix(padding).allSatisfy({ Int($0) == padding }) else {
                throw LatchkeyError(.invalidInput, "the secret's padding is not PKCS#7")
            }
            return SecretBytes(bytes.prefix(bytes.count - padding))
        }
    }

    /// Throws for a libgcrypt error code, naming `function`.
    private static func check(_ function: String, _ error: UInt32) throws {
        guard error != 0 else { return }
        throw LatchkeyError(.unavailable, String(cString: lk_gcry_strerror(error)), cFunction: function)
    }

    /// An AES-128-CBC context with its key and IV set, closed (and wiped by libgcrypt) when let go.
    private final class Cipher {
        var handle: OpaquePointer?
        init(key: SecretBytes, iv: [UInt8]) throws {
            try check(
                "gcry_cipher_open",
                lk_gcry_cipher_open(&handle, LK_GCRY_CIPHER_AES, LK_GCRY_CIPHER_MODE_CBC, 0))
            try key.withUnsafeBytes {
                try check("gcry_cipher_setkey", lk_gcry_cipher_setkey(handle, $0.baseAddress, $0.count))
            }
            try check("gcry_cipher_setiv", lk_gcry_cipher_setiv(handle, iv, iv.count))
        }
        deinit { lk_gcry_cipher_close(handle) }
    }

    /// A multi-precision integer, released (its limbs wiped by libgcrypt) when let go.
    private final class Number {
        let mpi: OpaquePointer
        init() { mpi = lk_gcry_mpi_new(0) }
        init(hex: String) throws {
            var result: OpaquePointer?
            try check("gcry_mpi_scan", lk_gcry_mpi_scan(&result, LK_GCRYMPI_FMT_HEX, hex, 0, nil))
            mpi = result!
        }
        init(bytes: SecretBytes) throws {
            var result: OpaquePointer?
            try bytes.withUnsafeBytes {
                try check("gcry_mpi_scan", lk_gcry_mpi_scan(&result, LK_GCRYMPI_FMT_USG, $0.baseAddress, $0.count, nil))
            }
            mpi = result!
        }
        deinit { lk_gcry_mpi_release(mpi) }

        /// The number, big-endian, left-padded with zeros to the prime's length.
        func bytes() throws -> SecretBytes {
            var length = 0
            try check("gcry_mpi_print", lk_gcry_mpi_print(LK_GCRYMPI_FMT_USG, nil, 0, &length, mpi))
            guard length <= Gcrypt.primeBytes else {
                throw LatchkeyError(.invalidInput, "a DH number is longer than the prime")
            }
            return try SecretBytes(count: Gcrypt.primeBytes) { out in
                out.initializeMemory(as: UInt8.self, repeating: 0)
                let start = out.baseAddress! + (Gcrypt.primeBytes - length)
                try check(
                    "gcry_mpi_print",
                    lk_gcry_mpi_print(LK_GCRYMPI_FMT_USG, start.assumingMemoryBound(to: UInt8.self), length, nil, mpi))
            }
        }
    }
}
