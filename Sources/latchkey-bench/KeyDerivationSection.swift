import Latchkey

/// Argon2id at the parameters calibration chooses for the policy's default
/// KDF target (`Policy.KDFBounds.standard`): the bare derivation, and the
/// unlock of a passphrase vault (a fresh backend's first read) with them.
struct KeyDerivationSection {
    let directory: String
    let samples: Int

    static let section = "key derivation (passphrase vault)"

    func run(into report: inout Report) throws {
        let bounds = Policy.KDFBounds.standard
        // Exactly as a Vault calibrates a new passphrase vault under the default bounds.
        let (parameters, calibration) = try Stopwatch.timed { try bounds.calibration.resolve() }
        report.notes.append(
            "key derivation: calibrated for the policy's standard target \(Report.time(bounds.targetUnlockTime)) from \(bounds.minimumMemoryKiB / 1_024) MiB in \(Report.time(calibration)): \(parameters)"
        )

        let derive = try Stopwatch.sample(samples, warmup: 0) { try BenchmarkProbe.deriveKey(parameters) }
        let deriveMeasurement = report.add(Self.section, "Argon2id crypto_pwhash (\(parameters))", derive)

        let store = "\(directory)/passphrase"
        let passphrase = SecretBytes(utf8: "correct horse battery staple")
        let appID = try AppID(FileBackendSection.appID)
        let writer = EncryptedFileBackend(
            appID: appID, directory: store, keySource: .passphrase(passphrase, newVault: .fixed(parameters)))
        let key = ItemKey(kind: .session, account: "user@example.com", name: "access")
        try writer.write(StoredItem(value: FileBackendSection.token()), for: key)
        let unlock = try Stopwatch.sample(samples, warmup: 0) {
            let reader = EncryptedFileBackend(appID: appID, directory: store, keySource: .passphrase(passphrase))
            guard try reader.read(key) != nil else { throw LatchkeyError(.internal, "the stored entry was not found") }
        }
        report.add(
            FileBackendSection.compare(
                Measurement(
                    section: Self.section, name: "unlock: fresh instance's first read, 1 entry", summary: unlock),
                with: deriveMeasurement, target: nil))
        try writer.deleteAll()
    }
}
