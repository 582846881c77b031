extension KDFParameters {
    /// The default unlock time calibration aims at.
    package static let defaultTarget: Duration = .milliseconds(300)

    /// Chooses parameters that make one key derivation on this machine take
    /// about `target`: it times one pass at `memoryLimit` (halving the memory,
    /// down to `minimumMemory`, while a single pass is slower than `target`), then three
    /// passes, and from the two (a fixed cost for filling the memory plus a cost
    /// per pass) takes as many passes as fit, between ``minimumOps`` and
    /// `maximumPasses`. When more passes would fit than that, it uses more memory
    /// instead (up to `maximumMemory`), which Argon2id turns into more work for
    /// an attacker than passes do.
    ///
    /// It runs `crypto_pwhash` a few times, taking about half of `target` or more.
    /// - Parameters:
    ///   - target: The unlock time to aim at, such as 250 to 500 ms.
    ///   - memoryLimit: The memory to start from, in bytes; 64 MiB by default.
    ///   - minimumMemory: The least memory to settle for, in bytes; 8 MiB by default.
    ///   - maximumPasses: The most passes to choose; ``maximumOps`` by default.
    ///   - maximumMemory: The most memory to choose, in bytes; 1 GiB by default.
    /// - Returns: Parameters within the reader's caps.
    /// - Throws: `LatchkeyError` `.internal` when `crypto_pwhash` fails (out of memory).
    package static func calibrated(
        target: Duration = defaultTarget, memoryLimit: Int = 64 << 20, minimumMemory: Int = 8 << 20,
        maximumPasses: UInt64 = maximumOps, maximumMemory: Int = maximumMemory
    ) throws -> KDFParameters {
        let floor = min(minimumMemory, max(Self.minimumMemory, memoryLimit))
        var memory = min(maximumMemory, max(floor, memoryLimit))
        var onePass = try timeOneDerivation(opsLimit: minimumOps, memoryLimit: memory)
        while onePass > target && memory / 2 >= floor {
            memory /= 2
            onePass = try timeOneDerivation(opsLimit: minimumOps, memoryLimit: memory)
        }
        guard onePass < target else { return try KDFParameters(opsLimit: minimumOps, memoryLimit: memory) }
        let threePasses = try timeOneDerivation(opsLimit: minimumOps + 2, memoryLimit: memory)
        let perPass = max((threePasses - onePass) / 2, .microseconds(1))
        let fixedCost = max(onePass - perPass, .zero)
        let fitting = max(1, ((target - fixedCost) / perPass).rounded(.down))
        let cap = min(maximumOps, max(minimumOps, maximumPasses))
        guard fitting > Double(cap) else {
            return try KDFParameters(opsLimit: max(minimumOps, UInt64(fitting)), memoryLimit: memory)
        }
        // The time per pass grows with the memory, so scale the memory by the passes that did not fit.
        let ceiling = min(Self.maximumMemory, max(memory, maximumMemory))
        let estimate = min(Double(ceiling), Double(memory) * fitting / Double(cap))
        // Filling more memory costs more than the per-pass estimate says: time the
        // estimate once and correct the memory by how far off it was.
        let measured = try timeOneDerivation(opsLimit: cap, memoryLimit: Self.mebibytes(estimate, atLeast: memory))
        let corrected = min(Double(ceiling), estimate * (target / measured))
        return try KDFParameters(opsLimit: cap, memoryLimit: Self.mebibytes(corrected, atLeast: memory))
    }

    /// `bytes` rounded down to whole mebibytes, but at least `floor`.
    private static func mebibytes(_ bytes: Double, atLeast floor: Int) -> Int {
        max(floor, Int(bytes) / (1 << 20) * (1 << 20))
    }

    /// How long one `crypto_pwhash` takes with these limits, on a throw-away passphrase.
    static func timeOneDerivation(opsLimit: UInt64, memoryLimit: Int) throws -> Duration {
        let passphrase = SecretBytes.random(count: 16)
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltLength)
        let clock = ContinuousClock()
        let start = clock.now
        _ = try Sodium.deriveKey(
            length: 32, passphrase: passphrase, salt: salt, opsLimit: opsLimit, memoryLimit: memoryLimit)
        return clock.now - start
    }
}
