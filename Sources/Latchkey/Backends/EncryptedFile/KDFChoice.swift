/// How a passphrase-protected vault that is being created picks its Argon2id
/// parameters. An existing vault is always opened with the parameters in its header.
public enum KDFChoice: Sendable, Hashable {
    /// Calibrate on this machine to about `target` per unlock (see ``KDFParameters/calibrated(target:memoryLimit:)``).
    case calibrated(target: Duration)
    /// Use exactly these parameters (tests use small ones to stay fast).
    case fixed(KDFParameters)

    /// The parameters this choice stands for.
    /// - Returns: The fixed parameters, or freshly calibrated ones.
    /// - Throws: `LatchkeyError` `.internal` when calibration cannot run `crypto_pwhash`.
    public func resolve() throws -> KDFParameters {
        switch self {
        case .calibrated(let target): return try KDFParameters.calibrated(target: target)
        case .fixed(let parameters): return parameters
        }
    }
}
