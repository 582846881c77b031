import Latchkey

/// A client's session (`OpenSession`): how secrets travel to and from that client.
/// `plain` sends them as they are; `dh-ietf1024-sha256-aes128-cbc-pkcs7` encrypts each
/// with the AES-128 key both ends derived from a DH exchange.
struct ProviderSession {
    /// The unique bus name of the client that opened it; no other client may use it.
    let owner: String
    /// The AES-128 key of a DH session; nil for `plain`.
    let key: SecretBytes?

    static let plain = "plain"
    static let dh = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// Opens a session of `algorithm` for `owner` with the client's `input`; a `dh` session
    /// uses `keyPair` (a spare made while no client waited) when given, else makes one.
    /// - Returns: The session and the output the client is sent (the provider's DH public
    ///   key, or an empty string for `plain`).
    /// - Throws: ``ProviderError`` `NotSupported` for another algorithm, `InvalidArgs` for input that does not fit it.
    static func open(
        algorithm: String, input: DBusValue, owner: String,
        keyPair: (privateKey: SecretBytes, publicKey: SecretBytes)? = nil
    ) throws(ProviderError) -> (
        ProviderSession, DBusValue
    ) {
        switch algorithm {
        case plain:
            return (ProviderSession(owner: owner, key: nil), .variant(.string("")))
        case dh:
            guard case .bytes(let peer) = input.unboxed else {
                throw .invalidArgs("the input of a \(dh) session is the client's public key, an array of bytes")
            }
            do {
                let pair = try keyPair ?? Gcrypt.keyPair()
                let key = try Gcrypt.sessionKey(privateKey: pair.privateKey, peerPublicKey: peer)
                return (ProviderSession(owner: owner, key: key), .variant(.bytes(pair.publicKey)))
            } catch {
                throw .invalidArgs(error.message)
            }
        default:
            throw .notSupported("the session algorithm \(algorithm) is not supported")
        }
    }

    /// A secret as the spec's `(oayays)` for this session at `path`.
    func encode(_ secret: SecretBytes, contentType: String, path: String) throws(ProviderError) -> DBusValue {
        guard let key else {
            return .tuple([.objectPath(path), .bytes(SecretBytes()), .bytes(secret), .string(contentType)])
        }
        do {
            let (iv, ciphertext) = try Gcrypt.encrypt(secret, key: key)
            return .tuple([.objectPath(path), .bytes(iv), .bytes(ciphertext), .string(contentType)])
        } catch {
            throw .failed(error.message)
        }
    }

    /// The secret and content type of an `(oayays)` the client sent in this session.
    /// - Throws: ``ProviderError`` `InvalidArgs` for one that does not decrypt.
    func decode(parameters: SecretBytes, value: SecretBytes) throws(ProviderError) -> SecretBytes {
        guard let key else { return value }
        do {
            return try Gcrypt.decrypt(value, key: key, iv: parameters)
        } catch {
            throw .invalidArgs(error.message)
        }
    }
}

extension Error {
    /// The message of a `LatchkeyError` (never a secret), else a description of the error.
    var message: String { (self as? LatchkeyError)?.message ?? "\(self)" }
}
