import Foundation
import Latchkey

/// Every single-bit flip of a small vault (opened by a fresh backend: it must
/// refuse with `tampered` or `wrongKey`) and of an audit trail (``AuditTrail/verify()``
/// must report it broken, or refuse it with an error).
struct CorruptionStress {
    let directory: String

    /// Returns (passed, failed): one check per flipped bit.
    func run() throws -> (passed: Int, failed: Int) {
        let store = directory + "/corruption"
        let appID = try AppID(FileBackendSection.appID)
        let backend = EncryptedFileBackend(appID: appID, directory: store, keySource: .keyFile)
        try backend.write(StoredItem(value: SecretBytes(utf8: "alice")), for: ItemKey(kind: .username, name: "last"))
        try backend.write(
            StoredItem(value: FileBackendSection.token(), expires: Date() + 3_600),
            for: ItemKey(kind: .session, account: "alice", name: "access"))
        let trail = AuditTrail(appID: appID, directory: store, backend: backend)
        let events: [AuditEvent] = [.usernameRemembered, .sessionSaved, .sessionRead, .logout, .wipe]
        for index in 0..<10 {
            try trail.record(
                events[index % events.count], outcome: .ok, backend: .file,
                account: index % 2 == 0 ? "alice" : nil, detail: index % 3 == 0 ? "entry \(index)" : nil)
        }
        var passed = 0
        var failed = 0

        let vault = try BenchmarkProbe.contents(of: backend.vaultPath)
        var codes: [String: Int] = [:]
        for bit in 0..<(vault.count * 8) {
            try BenchmarkProbe.overwrite(backend.vaultPath, with: Self.flip(vault, bit))
            let code: String
            do {
                _ = try EncryptedFileBackend(appID: appID, directory: store, keySource: .keyFile).list(kind: nil)
                code = "accepted"
            } catch let error as LatchkeyError {
                code = "\(error.code)"
            }
            codes[code, default: 0] += 1
            if code == "tampered" || code == "wrongKey" {
                passed += 1
            } else {
                failed += 1
                FileHandle.standardError.write(Data("corruption: vault bit \(bit) gave \(code)\n".utf8))
            }
        }
        try BenchmarkProbe.overwrite(backend.vaultPath, with: vault)
        print(
            "corruption: \(vault.count)-byte vault, \(vault.count * 8) single-bit flips: \(codes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        )

        let audit = try BenchmarkProbe.contents(of: trail.path)
        guard try trail.verify() == .intact(entryCount: 10, lastSequence: 10) else {
            throw LatchkeyError(.internal, "the untouched audit trail did not verify")
        }
        var detected = 0
        for bit in 0..<(audit.count * 8) {
            try BenchmarkProbe.overwrite(trail.path, with: Self.flip(audit, bit))
            let broken: Bool
            do {
                broken = try !trail.verify().isIntact
            } catch {
                broken = true // refusing to read the trail at all also detects the change
            }
            if broken {
                passed += 1
                detected += 1
            } else {
                failed += 1
                FileHandle.standardError.write(
                    Data("corruption: audit trail bit \(bit) (byte \(bit / 8)) was not detected\n".utf8))
            }
        }
        try BenchmarkProbe.overwrite(trail.path, with: audit)
        print(
            "corruption: \(audit.count)-byte audit trail (10 entries), \(audit.count * 8) single-bit flips: \(detected) detected"
        )
        try backend.deleteAll()
        return (passed, failed)
    }

    static func flip(_ bytes: [UInt8], _ bit: Int) -> [UInt8] {
        var copy = bytes
        copy[bit / 8] ^= 1 << (bit % 8)
        return copy
    }
}
