import Latchkey
import Testing

@testable import LatchkeyProvider

/// The DH session's pieces, libgcrypt's arithmetic, HMAC and cipher, without a bus.
@Suite("the provider's DH session")
struct DHSessionTests {
    @Test("HKDF-SHA256 with no salt and no info gives RFC 5869's test case 3")
    func hkdfVector() throws {
        let key = try Gcrypt.hkdf(SecretBytes([UInt8](repeating: 0x0b, count: 22)))
        #expect(key.copyBytes() == hex("8da4e775a563c18f715f802a063c5a31"))
    }

    @Test("both ends of a DH exchange derive the same key, and a secret encrypted with it decrypts")
    func exchange() throws {
        let client = try Gcrypt.keyPair()
        let (session, output) = try ProviderSession.open(
            algorithm: ProviderSession.dh, input: .variant(.bytes(client.publicKey)), owner: ":1.1")
        guard case .variant(.bytes(let providerPublic)) = output else {
            Issue.record("the output is the provider's public key")
            return
        }
        #expect(providerPublic.count == 128 && client.publicKey.count == 128)
        let clientKey = try Gcrypt.sessionKey(privateKey: client.privateKey, peerPublicKey: providerPublic)
        #expect(session.key == clientKey)
        for length in [0, 1, 15, 16, 17, 1000] {
            let secret = SecretBytes([UInt8](repeating: 0x61, count: length))
            let (iv, ciphertext) = try Gcrypt.encrypt(secret, key: clientKey)
            #expect(iv.count == 16 && ciphertext.count == (length / 16 + 1) * 16)
            #expect(try session.decode(parameters: iv, value: ciphertext) == secret)
        }
    }

    @Test("a session opened with a spare key pair answers with that pair's public key and derives the client's key")
    func spareKeyPair() throws {
        let client = try Gcrypt.keyPair()
        let spare = try Gcrypt.keyPair()
        let (session, output) = try ProviderSession.open(
            algorithm: ProviderSession.dh, input: .variant(.bytes(client.publicKey)), owner: ":1.1", keyPair: spare)
        guard case .variant(.bytes(let providerPublic)) = output else {
            Issue.record("the output is the provider's public key")
            return
        }
        #expect(providerPublic == spare.publicKey)
        let clientKey = try Gcrypt.sessionKey(privateKey: client.privateKey, peerPublicKey: spare.publicKey)
        #expect(session.key == clientKey)
    }

    @Test("a private exponent has 256 bits, its top one set, and differs at each session")
    func exponentLength() throws {
        let first = try Gcrypt.keyPair().privateKey.copyBytes()
        let second = try Gcrypt.keyPair().privateKey.copyBytes()
        #expect(first.count == 128)
        #expect(first.prefix(96).allSatisfy { $0 == 0 } && first[96] & 0x80 != 0, "\(first)")
        #expect(first != second)
    }

    @Test("a peer key outside the group, a cut ciphertext or bad padding is refused as InvalidArgs")
    func refusals() throws {
        for peer in [[UInt8](), [1], [UInt8](repeating: 0xff, count: 128)] {
            #expect(throws: ProviderError.self) {
                try ProviderSession.open(algorithm: ProviderSession.dh, input: .bytes(SecretBytes(peer)), owner: ":1.1")
            }
        }
        let key = SecretBytes([UInt8](repeating: 7, count: 16))
        let session = ProviderSession(owner: ":1.1", key: key)
        let (iv, ciphertext) = try Gcrypt.encrypt(SecretBytes(utf8: "value"), key: key)
        let cut = SecretBytes(ciphertext.copyBytes().dropLast())
        #expect(throws: ProviderError.self) { try session.decode(parameters: iv, value: cut) }
        // The IV's last byte flipped flips the padding's last byte: "value" padded with 11 x 0x0b reads as 0x0a.
        var flipped = iv.copyBytes()
        flipped[15] ^= 1
        #expect(throws: ProviderError.self) { try session.decode(parameters: SecretBytes(flipped), value: ciphertext) }
        #expect(try session.decode(parameters: iv, value: ciphertext) == SecretBytes(utf8: "value"))
    }

    private func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map {
            UInt8(text.dropFirst($0).prefix(2), radix: 16)!
        }
    }
}
