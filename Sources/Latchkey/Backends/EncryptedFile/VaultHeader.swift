/// The authenticated header of a vault (see `docs/FILE-FORMAT.md`): it is the
/// AEAD's associated data. Version 2 (240 bytes) adds the app id, so a vault
/// copied into another namespace fails as `tampered`; version 1 (104 bytes) is
/// still read, and rewritten as version 2 at its next save.
struct VaultHeader: Equatable, Sendable {
    /// The format version: 1 (read only) or 2 (written).
    var version: UInt16 = VaultHeader.currentVersion
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
    /// The app namespace the vault belongs to (version 2); nil in version 1.
    var appID: String?

    static let magic = Array("LATCHKEY".utf8)
    /// The version this Latchkey writes.
    static let currentVersion: UInt16 = 2
    static let keyCheckLength = 32
    static let checksumLength = 16
    /// The room for the app id in version 2 (an app id is at most 128 bytes).
    static let appIDFieldLength = 128
    /// The header's length in the version this Latchkey writes (2).
    static let length = 240
    /// The header's length in version 1.
    static let version1Length = 104
    /// The header and the nonce of a vault this Latchkey writes.
    static let lengthWithNonce = length + nonceLength
    static let nonceLength = 24

    /// The header's length in this header's version.
    var encodedLength: Int { version == 1 ? Self.version1Length : Self.length }
    /// The shortest vault of this header's version: header, nonce, an empty table (4 bytes) and the tag.
    var minimumFileLength: Int { encodedLength + Self.nonceLength + 4 + 16 }

    private static let passphraseSource: UInt8 = 1
    private static let keyFileSource: UInt8 = 2
    private static let noKDF: UInt8 = 0
    private static let argon2id13: UInt8 = 1

    /// The header bytes of this header's version, checksum included.
    func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(encodedLength)
        Self.append(version, to: &bytes)
        Self.append(~version, to: &bytes)
        let isPassphrase = source == .passphrase
        bytes.append(isPassphrase ? Self.passphraseSource : Self.keyFileSource)
        bytes.append(isPassphrase ? Self.argon2id13 : Self.noKDF)
        Self.append(UInt16(0), to: &bytes)
        Self.append(kdf?.opsLimit ?? 0, to: &bytes)
        Self.append(UInt64(kdf?.memoryLimit ?? 0), to: &bytes)
        bytes += salt
        Self.append(generation, to: &bytes)
        bytes += keyCheck
        if version >= 2 {
            let id = Array((appID ?? "").utf8)
            precondition((1...Self.appIDFieldLength).contains(id.count), "a version 2 header needs an app id")
            bytes.append(UInt8(id.count))
            bytes += id + [UInt8](repeating: 0, count: Self.appIDFieldLength - id.count)
            bytes += [UInt8](repeating: 0, count: Self.length - Self.checksumLength - bytes.count)
        }
        bytes += Sodium.hash(bytes[...], length: Self.checksumLength)
        precondition(bytes.count == encodedLength, "vault header has the wrong length")
        return bytes
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Decodes and checks the header at the start of `file` (steps 1 to 5 of
    /// "Reading" in `docs/FILE-FORMAT.md`). It never runs the KDF, and it does
    /// not compare the app id (the caller knows which it expects).
    /// - Parameters:
    ///   - file: The whole vault file, or at least its first 240 bytes.
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
                let version = cursor.uint16(), let complement = cursor.uint16(), complement == ~version
            else {
                throw LatchkeyError(
                    .tampered, "\(path) is damaged or is not a Latchkey vault (its first 12 bytes are wrong)")
            }
            guard version == 1 || version == Self.currentVersion else {
                throw LatchkeyError(
                    .invalidInput,
                    "\(path) is a vault of format version \(version); this Latchkey reads versions 1 and \(Self.currentVersion) only"
                )
            }
            let length = version == 1 ? Self.version1Length : Self.length
            guard fileLength >= length + Self.nonceLength + 4 + 16, bytes.count >= length else {
                throw LatchkeyError(.tampered, "\(path) is truncated (\(fileLength) bytes)")
            }
            let checksum = Sodium.hash(bytes[..<(length - checksumLength)], length: checksumLength)
            guard checksum.elementsEqual(bytes[(length - checksumLength)..<length]) else {
                throw LatchkeyError(.tampered, "\(path) has a damaged header (checksum mismatch)")
            }
            var header = try decodeFields(&cursor, path: path)
            header.version = version
            if version >= 2 { header.appID = try decodeAppID(&cursor, path: path) }
            return header
        }
    }

    /// Decodes the version 2 app id field and the reserved bytes after it.
    private static func decodeAppID(_ cursor: inout ByteCursor, path: String) throws -> String {
        let damaged = LatchkeyError(.tampered, "\(path) has an invalid header (app id)")
        guard let count = cursor.uint8(), (1...appIDFieldLength).contains(Int(count)),
            let field = cursor.take(appIDFieldLength),
            let reserved = cursor.take(length - checksumLength - 89 - appIDFieldLength),
            field.dropFirst(Int(count)).allSatisfy({ $0 == 0 }), reserved.allSatisfy({ $0 == 0 }),
            let text = String(validating: field.prefix(Int(count)), as: UTF8.self),
            (try? AppID(text)) != nil
        else { throw damaged }
        return text
    }

    /// Decodes bytes 12..<88, already covered by a matching checksum.
    private static func decodeFields(_ cursor: inout ByteCursor, path: String) throws -> VaultHeader {
        let damaged = LatchkeyError(.tampered, "\(path) has an invalid header")
        guard let source = cursor.uint8(), let algorithm = cursor.uint8(), let reserved = cursor.uint16(),
            let ops = cursor.uint64(), let memory = cursor.uint64(),
            let salt = cursor.take(Sodium.pwhashSaltLength), let generation = cursor.uint64(),
            let keyCheck = cursor.take(keyCheckLength), reserved == 0
        else { throw damaged }
        var header = VaultHeader(
            source: .keyFile, kdf: nil, salt: Array(salt), generation: generation, keyCheck: Array(keyCheck))
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
