/// The authenticated header of a version 1 vault (bytes 0..<104; see
/// `docs/FILE-FORMAT.md`): it is the AEAD's associated data.
struct VaultHeader: Equatable, Sendable {
    /// Which key source the vault was made with.
    var source: KeySource.Kind
    /// The Argon2id parameters for a passphrase vault; nil for a key-file vault.
    var kdf: KDFParameters?
    /// Random, chosen when the vault is created.
    var salt: [UInt8]
    /// 1 for the first save, plus 1 for every save after it.
    var generation: UInt64
    /// The key check value (see ``VaultKeys``).
    var keyCheck: [UInt8]

    static let magic = Array("LATCHKEY".utf8)
    static let version: UInt16 = 1
    static let keyCheckLength = 32
    static let checksumLength = 16
    /// The header's length in version 1.
    static let length = 104
    /// The header and the nonce: what changes on every save.
    static let lengthWithNonce = length + 24
    /// The shortest version 1 vault: header, nonce, an empty table (4 bytes) and the tag.
    static let minimumFileLength = lengthWithNonce + 4 + 16

    private static let passphraseSource: UInt8 = 1
    private static let keyFileSource: UInt8 = 2
    private static let noKDF: UInt8 = 0
    private static let argon2id13: UInt8 = 1

    /// The 104 header bytes, checksum included.
    func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.length)
        Self.append(Self.version, to: &bytes)
        Self.append(~Self.version, to: &bytes)
        let isPassphrase = source == .passphrase
        bytes.append(isPassphrase ? Self.passphraseSource : Self.keyFileSource)
        bytes.append(isPassphrase ? Self.argon2id13 : Self.noKDF)
        Self.append(UInt16(0), to: &bytes)
        Self.append(kdf?.opsLimit ?? 0, to: &bytes)
        Self.append(UInt64(kdf?.memoryLimit ?? 0), to: &bytes)
        bytes += salt
        Self.append(generation, to: &bytes)
        bytes += keyCheck
        bytes += Sodium.hash(bytes[...], length: Self.checksumLength)
        precondition(bytes.count == Self.length, "vault header has the wrong length")
        return bytes
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Decodes and checks the header at the start of `file` (steps 1 to 5 of
    /// "Reading" in `docs/FILE-FORMAT.md`). It never runs the KDF.
    /// - Parameters:
    ///   - file: The whole vault file, or at least its first 104 bytes.
    ///   - fileLength: The whole file's length, when `file` is only its start.
    ///   - path: The vault's path, for error messages.
    /// - Throws: `.tampered` when the file is damaged or not a vault;
    ///   `.invalidInput` for an unknown version or KDF limits above the caps.
    static func decode(_ file: some Collection<UInt8>, fileLength: Int? = nil, path: String) throws -> VaultHeader {
        let bytes = Array(file.prefix(length))
        let fileLength = fileLength ?? file.count
        return try bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            guard let magic = cursor.take(Self.magic.count), magic.elementsEqual(Self.magic),
                  let version = cursor.uint16(), let complement = cursor.uint16(), complement == ~version else {
                throw LatchkeyError(.tampered, "\(path) is damaged or is not a Latchkey vault (its first 12 bytes are wrong)")
            }
            guard version == Self.version else {
                throw LatchkeyError(.invalidInput, "\(path) is a vault of format version \(version); this Latchkey reads version \(Self.version) only")
            }
            guard fileLength >= minimumFileLength, bytes.count == length else {
                throw LatchkeyError(.tampered, "\(path) is truncated (\(fileLength) bytes)")
            }
            let checksum = Sodium.hash(bytes[..<(length - checksumLength)], length: checksumLength)
            guard checksum.elementsEqual(bytes[(length - checksumLength)...]) else {
                throw LatchkeyError(.tampered, "\(path) has a damaged header (checksum mismatch)")
            }
            return try decodeFields(&cursor, path: path)
        }
    }

    /// Decodes bytes 12..<88, already covered by a matching checksum.
    private static func decodeFields(_ cursor: inout ByteCursor, path: String) throws -> VaultHeader {
        let damaged = LatchkeyError(.tampered, "\(path) has an invalid header")
        guard let source = cursor.uint8(), let algorithm = cursor.uint8(), let reserved = cursor.uint16(),
              let ops = cursor.uint64(), let memory = cursor.uint64(),
              let salt = cursor.take(Sodium.pwhashSaltLength), let generation = cursor.uint64(),
              let keyCheck = cursor.take(keyCheckLength), reserved == 0 else { throw damaged }
        var header = VaultHeader(source: .keyFile, kdf: nil, salt: Array(salt), generation: generation, keyCheck: Array(keyCheck))
        switch (source, algorithm) {
        case (keyFileSource, noKDF):
            guard ops == 0, memory == 0 else { throw damaged }
        case (passphraseSource, argon2id13):
            guard ops >= KDFParameters.minimumOps, memory >= UInt64(KDFParameters.minimumMemory) else { throw damaged }
            do {
                header.kdf = try KDFParameters(opsLimit: ops, memoryLimit: memory)
            } catch let error as LatchkeyError {
                throw LatchkeyError(error.code, "\(path): \(error.message); refused without running the KDF")
            }
            header.source = .passphrase
        default:
            throw damaged
        }
        return header
    }
}
