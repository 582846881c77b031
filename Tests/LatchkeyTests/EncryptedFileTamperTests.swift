import LatchkeyTestSupport
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Encrypted file backend refuses damaged, altered and foreign vaults", .sandboxed)
struct EncryptedFileTamperTests {
    /// A small vault with two items; returns the backend and the vault's bytes.
    private func smallVault(_ source: KeySource, label: String = #function) throws -> (EncryptedFileBackend, [UInt8]) {
        let backend = try makeFileBackend(source, label: label)
        try backend.write(StoredItem(value: SecretBytes(utf8: "alice")), for: ItemKey(kind: .username, name: "last"))
        try backend.write(
            StoredItem(value: SecretBytes(utf8: "t0k3n"), expires: Date() + 60),
            for: ItemKey(kind: .session, account: "alice", name: "access"))
        return (backend, try fileBytes(backend.vaultPath))
    }

    /// What a fresh instance (no cache, no derived key) reports when it opens the vault.
    private func openFresh(_ backend: EncryptedFileBackend, _ source: KeySource) -> LatchkeyError.Code? {
        let fresh = EncryptedFileBackend(appID: testAppID, directory: backend.directory, keySource: source)
        return errorCode { _ = try fresh.list(kind: nil) }
    }

    @Test(
        "every single-bit flip, header included, is rejected as tampered or wrongKey", arguments: TestKeySource.allCases
    )
    func everyBitFlip(source: TestKeySource) throws {
        let (backend, original) = try smallVault(source.source)
        #expect(openFresh(backend, source.source) == nil)
        var counts: [String: Int] = [:]
        for bit in 0..<(original.count * 8) {
            var flipped = original
            flipped[bit / 8] ^= 1 << (bit % 8)
            try overwrite(backend.vaultPath, with: flipped)
            let code = openFresh(backend, source.source)
            counts[code?.rawValue ?? "accepted", default: 0] += 1
            #expect(code == .tampered || code == .wrongKey, "bit \(bit) gave \(code?.rawValue ?? "no error")")
        }
        print(
            "bit flips of a \(original.count)-byte \(source.rawValue) vault: \(original.count * 8) flips, \(counts.sorted { $0.key < $1.key })"
        )
    }

    @Test("truncation at every length and appended bytes are rejected as tampered", arguments: TestKeySource.allCases)
    func truncationAndExtension(source: TestKeySource) throws {
        let (backend, original) = try smallVault(source.source)
        for length in 0..<original.count {
            try overwrite(backend.vaultPath, with: Array(original[..<length]))
            #expect(openFresh(backend, source.source) == .tampered, "truncated to \(length)")
        }
        for extra in [[0], [1], Array(repeating: 0, count: 16), Sodium.randomBytes(count: 1000)] as [[UInt8]] {
            try overwrite(backend.vaultPath, with: original + extra)
            #expect(openFresh(backend, source.source) == .tampered, "\(extra.count) bytes appended")
        }
        print("truncations of a \(original.count)-byte \(source.rawValue) vault: \(original.count) rejected")
    }

    @Test("a header or nonce spliced from another save of the same vault is rejected as tampered")
    func splice() throws {
        let (backend, first) = try smallVault(.keyFile)
        try backend.write(StoredItem(value: SecretBytes(utf8: "alicf")), for: ItemKey(kind: .username, name: "last"))
        let second = try fileBytes(backend.vaultPath)
        #expect(first.count == second.count)
        let headerOfFirst = Array(first[..<VaultHeader.length]) + Array(second[VaultHeader.length...])
        let nonceOfFirst =
            Array(second[..<VaultHeader.length]) + Array(first[VaultHeader.length..<VaultHeader.lengthWithNonce])
            + Array(second[VaultHeader.lengthWithNonce...])
        for spliced in [headerOfFirst, nonceOfFirst] {
            try overwrite(backend.vaultPath, with: spliced)
            #expect(openFresh(backend, .keyFile) == .tampered)
        }
    }

    @Test("an older copy put back while the vault is open is rejected as tampered")
    func rollbackWhileOpen() throws {
        let (backend, first) = try smallVault(.keyFile)
        try backend.write(StoredItem(value: SecretBytes(utf8: "bob")), for: ItemKey(kind: .username, name: "last"))
        try PrivateFiles.replace(backend.vaultPath, with: first)
        #expect(errorCode { _ = try backend.read(ItemKey(kind: .username, name: "last")) } == .tampered)
    }

    @Test("a wrong passphrase gives wrongKey and leaves the vault's bytes unchanged")
    func wrongPassphrase() throws {
        let (backend, original) = try smallVault(fastPassphrase("right"))
        let wrong = EncryptedFileBackend(
            appID: testAppID, directory: backend.directory, keySource: fastPassphrase("wrong"))
        #expect(errorCode { _ = try wrong.read(ItemKey(kind: .username, name: "last")) } == .wrongKey)
        #expect(
            errorCode {
                try wrong.write(StoredItem(value: SecretBytes(utf8: "x")), for: ItemKey(kind: .username, name: "last"))
            } == .wrongKey)
        #expect(errorCode { try wrong.delete(ItemKey(kind: .username, name: "last")) } == .wrongKey)
        #expect(try fileBytes(backend.vaultPath) == original)
        #expect(try backend.read(ItemKey(kind: .username, name: "last"))?.value == SecretBytes(utf8: "alice"))
    }

    @Test("a replaced, missing or wrong-size key file, or the other key source, gives wrongKey")
    func wrongKeyFile() throws {
        let (backend, original) = try smallVault(.keyFile)
        let key = try fileBytes(backend.keyFilePath)
        try overwrite(backend.keyFilePath, with: Sodium.randomBytes(count: 32))
        #expect(openFresh(backend, .keyFile) == .wrongKey)
        try overwrite(backend.keyFilePath, with: key + [0])
        #expect(openFresh(backend, .keyFile) == .wrongKey)
        try POSIX.removeFile(backend.keyFilePath)
        #expect(openFresh(backend, .keyFile) == .wrongKey)
        let writer = EncryptedFileBackend(appID: testAppID, directory: backend.directory, keySource: .keyFile)
        #expect(
            errorCode { try writer.write(StoredItem(value: SecretBytes()), for: ItemKey(kind: .setting, name: "x")) }
                == .wrongKey)
        #expect(try POSIX.status(of: backend.keyFilePath) == nil, "no new key may be made for an existing vault")
        #expect(openFresh(backend, fastPassphrase()) == .wrongKey)
        #expect(try fileBytes(backend.vaultPath) == original)
    }

    /// The vault with bytes `range` of its header replaced and the checksum recomputed.
    private func patchedHeader(_ bytes: [UInt8], at offset: Int, with patch: [UInt8]) -> [UInt8] {
        var patched = bytes
        patched.replaceSubrange(offset..<(offset + patch.count), with: patch)
        let checksumStart = VaultHeader.length - VaultHeader.checksumLength
        patched.replaceSubrange(
            checksumStart..<VaultHeader.length,
            with: Sodium.hash(patched[..<checksumStart], length: VaultHeader.checksumLength))
        return patched
    }

    @Test("a future format version gives invalidInput naming the version")
    func futureVersion() throws {
        let (backend, original) = try smallVault(.keyFile)
        let version: UInt16 = 3
        var future = original
        future.replaceSubrange(
            8..<12, with: [UInt8(version & 0xFF), UInt8(version >> 8), UInt8(~version & 0xFF), UInt8(~version >> 8)])
        try overwrite(backend.vaultPath, with: Array(future[..<40]))
        let fresh = EncryptedFileBackend(appID: testAppID, directory: backend.directory, keySource: .keyFile)
        let error = #expect(throws: LatchkeyError.self) { _ = try fresh.list(kind: nil) }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains("version 3") == true)
    }

    @Test(
        "KDF parameters above the caps are refused before the KDF runs",
        arguments: [
            (UInt64(1), UInt64(4) << 30), (UInt64(1_000_000), UInt64(8192)), (UInt64.max, UInt64.max),
        ])
    func kdfCap(ops: UInt64, memory: UInt64) throws {
        let (backend, original) = try smallVault(fastPassphrase())
        let fields =
            withUnsafeBytes(of: ops.littleEndian) { Array($0) } + withUnsafeBytes(of: memory.littleEndian) { Array($0) }
        try overwrite(backend.vaultPath, with: patchedHeader(original, at: 16, with: fields))
        let clock = ContinuousClock()
        let start = clock.now
        #expect(openFresh(backend, fastPassphrase()) == .invalidInput)
        #expect(errorCode { _ = try backend.vaultKDFParameters() } == .invalidInput)
        // Loose: running Argon2id with these limits would take minutes or fail for lack of memory.
        #expect(clock.now - start < .seconds(5))
    }

    @Test("a header's memory limit is named as written (2^64-1), not clamped to Int.max")
    func memoryLimitNamedExactly() throws {
        let (backend, original) = try smallVault(fastPassphrase())
        let fields =
            withUnsafeBytes(of: UInt64(1).littleEndian) { Array($0) }
            + withUnsafeBytes(of: UInt64.max.littleEndian) { Array($0) }
        try overwrite(backend.vaultPath, with: patchedHeader(original, at: 16, with: fields))
        let error = #expect(throws: LatchkeyError.self) { _ = try backend.vaultKDFParameters() }
        #expect(error?.message.contains("18446744073709551615 bytes") == true, "\(String(describing: error))")
        #expect(error?.message.contains("9223372036854775807") == false)
    }

    @Test("a header whose fields were changed consistently (checksum recomputed) still gives tampered or wrongKey")
    func forgedHeaderFields() throws {
        let (backend, original) = try smallVault(.keyFile)
        var results: [LatchkeyError.Code?] = []
        for (offset, patch) in [
            (48, [UInt8](repeating: 0x7F, count: 8)), (32, Sodium.randomBytes(count: 16)),
            (56, Sodium.randomBytes(count: 32)),
        ] {
            try overwrite(backend.vaultPath, with: patchedHeader(original, at: offset, with: patch))
            results.append(openFresh(backend, .keyFile))
        }
        #expect(results == [.tampered, .wrongKey, .wrongKey])
    }
}
