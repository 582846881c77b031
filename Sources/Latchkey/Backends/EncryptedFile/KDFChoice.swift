/// How a passphrase-protected vault that is being created picks its Argon2id
/// parameters. An existing vault is always opened with the parameters in its header.
package enum KDFChoice: Sendable, Hashable {
    /// Calibrate on this machine to about `target` per unlock, within the memory
    /// and pass bounds (see
    /// ``KDFParameters/calibrated(target:memoryLimit:minimumMemory:maximumPasses:maximumMemory:)``).
    case calibrated(
        target: Duration, minimumMemory: Int = 8 << 20, maximumPasses: UInt64 = KDFParameters.maximumOps,
        maximumMemory: Int = KDFParameters.maximumMemory)
    /// Use exactly these parameters (tests use small ones to stay fast).
    case fixed(KDFParameters)

    /// The parameters this choice stands for.
    /// - Returns: The fixed parameters, or freshly calibrated ones.
    /// - Throws: `LatchkeyError` `.internal` when calibration cannot run `crypto_pwhash`.
    package func resolve() throws -> KDFParameters {
        switch self {
        case .calibrated(let target, let minimumMemory, let maximumPasses, let maximumMemory):
            return try KDFParameters.calibrated(
                target: target, memoryLimit: max(64 << 20, minimumMemory), minimumMemory: minimumMemory,
                maximumPasses: maximumPasses, maximumMemory: maximumMemory)
        case .fixed(let parameters): return parameters
        }
    }
}
