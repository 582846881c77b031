import Latchkey

extension BenchmarkProbe {
    /// One XChaCha20-Poly1305 message of a fixed size under a random key: the
    /// floor for sealing or opening a vault's table of the same size.
    final class AEAD {
        private let key = SecretBytes.random(count: Sodium.aeadKeyLength)
        private let plaintext: SecretBytes
        private var sealed: (nonce: [UInt8], ciphertext: [UInt8])
        private let additionalData: [UInt8]

        /// Creates a message of `size` random bytes and seals it once.
        /// - Parameter size: The plaintext's length in bytes.
        init(size: Int) {
            plaintext = SecretBytes.random(count: max(0, size))
            additionalData = Sodium.randomBytes(count: 64)
            sealed = Sodium.seal(plaintext, additionalData: additionalData, key: key)
        }

        /// Seals the message again under a fresh random nonce
        /// (`crypto_aead_xchacha20poly1305_ietf_encrypt`).
        func seal() {
            sealed = Sodium.seal(plaintext, additionalData: additionalData, key: key)
        }

        /// Opens the last sealed message (`crypto_aead_xchacha20poly1305_ietf_decrypt`).
        /// - Returns: Whether it authenticated (always, unless memory was corrupted).
        func open() -> Bool {
            Sodium.open(sealed.ciphertext[...], nonce: sealed.nonce[...], additionalData: additionalData[...], key: key)
                != nil
        }
    }
}
