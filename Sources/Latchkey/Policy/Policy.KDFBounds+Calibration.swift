extension Policy.KDFBounds {
    /// How a new passphrase vault under these bounds picks its Argon2id
    /// parameters: calibrated to ``targetUnlockTime``, within the memory and pass bounds.
    package var calibration: KDFChoice {
        .calibrated(
            target: .milliseconds(Int64((targetUnlockTime * 1_000).rounded())),
            minimumMemory: minimumMemoryKiB * 1_024, maximumPasses: UInt64(maximumOpsLimit),
            maximumMemory: maximumMemoryKiB * 1_024)
    }
}
