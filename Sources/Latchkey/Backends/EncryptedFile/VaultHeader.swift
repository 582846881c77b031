/// The authenticated header of a vault (see `docs/FILE-FORMAT.md`): it is the
/// AEAD's associated data. Format version 2, the first released one (240 bytes),
/// holds the app id, so a vault copied into another namespace fails as `tampered`.
/// Version 1 was never released; such a file is refused, naming its version.
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
    /// The app namespace the vault belongs to.
    var appID: String

    static let magic = Array("LATCHKEY".utf8)
    /// The format version, the only one this Latchkey reads and writes.
    static let version: UInt16 = 2
    static let keyCheckLength = 32
    static let checksumLength = 16
    /// The room for the app id (an app id is at most 128 bytes).
    static let appIDFieldLength = 128
    /// The header's length.
    static let length = 240
    /// The header and the nonce.
    static let lengthWithNonce = length + nonceLength
    static let nonceLength = 24
    /// The shortest vault: header, nonce, an empty table (4 bytes) and the tag.
    static let minimumFileLength = lengthWithNonce + 4 + 16

    private static let passphraseSource: UInt8 = 1
    private static let keyFileSource: UInt8 = 2
    private static let noKDF: UInt8 = 0
    private static let argon2id13: UInt8 = 1

    /// The header bytes, checksum included.
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
        let id = Array(appID.utf8)
        precondition((1...Self.appIDFieldLength).contains(id.count), "a vault header needs an app id")
        bytes.append(UInt8(id.count))
        bytes += id + [UInt8](repeating: 0, count: Self.appIDFieldLength - id.count)
        bytes += [UInt8](repeating: 0, count: Self.length - Self.checksumLength - bytes.count)
        bytes += Sodium.hash(bytes[...], length: Self.checksumLength)
        precondition(bytes.count == Self.length, "vault header has the wrong length")
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
            guard version == Self.version else {
                throw LatchkeyError(
                    .invalidInput,
                    version == 1
                        ? "\(path) is a vault of format version 1, written by a build of Latchkey from before its first release; this Latchkey reads version \(Self.version) only, so move the file away and store its credentials again"
                        : "\(path) is a vault of format version \(version); this Latchkey reads version \(Self.version) only"
                )
            }
            guard fileLength >= Self.minimumFileLength, bytes.count >= length else {
                throw LatchkeyError(.tampered, "\(path) is truncated (\(fileLength) bytes)")
            }
            let checksum = Sodium.hash(bytes[..<(length - checksumLength)], length: checksumLength)
            guard checksum.elementsEqual(bytes[(length - checksumLength)..<length]) else {
                throw LatchkeyError(.tampered, "\(path) has a damaged header (checksum mismatch)")
            }
            var header = try decodeFields(&cursor, path: path)
            header.appID = try decodeAppID(&cursor, path: path)
            return header
        }
    }

    /// Decodes the app id field and the reserved bytes after it.
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

    /// Decodes bytes 12..<88, already covered by a matching checksum; the app id
    /// is left empty for ``decodeAppID(_:path:)`` to fill.
    private static func decodeFields(_ cursor: inout ByteCursor, path: String) throws -> VaultHeader {
        let damaged = LatchkeyError(.tampered, "\(path) has an invalid header")
        guard let source = cursor.uint8(), let algorithm = cursor.uint8(), let reserved = cursor.uint16(),
            let ops = cursor.uint64(), let memory = cursor.uint64(),
            let salt = cursor.take(Sodium.pwhashSaltLength), let generation = cursor.uint64(),
            let keyCheck = cursor.take(keyCheckLength), reserved == 0
        else { throw damaged }
        var header = VaultHeader(
            source: .keyFile, kdf: nil, salt: Array(salt), generation: generation, keyCheck: Array(keyCheck),
            appID: "")
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
