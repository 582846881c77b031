extension Policy {
    /// The passphrase KDF (Argon2id) settings (`file.kdf`): the unlock time to
    /// calibrate for, and the bounds a reader accepts from a vault header, so a
    /// crafted header cannot make an unlock hang or exhaust memory.
    public struct KDFBounds: Sendable, Equatable {
        /// The unlock time to calibrate for, in seconds (`targetUnlockMilliseconds` / 1000).
        public internal(set) var targetUnlockTime: Double
        /// The least memory a new vault's KDF uses, in KiB (`minimumMemoryKiB`).
        public internal(set) var minimumMemoryKiB: Int
        /// The most memory any vault's KDF may ask for, in KiB (`maximumMemoryKiB`).
        public internal(set) var maximumMemoryKiB: Int
        /// The largest Argon2id pass count any vault may ask for (`maximumOpsLimit`).
        public internal(set) var maximumOpsLimit: Int

        /// The settings used when `file.kdf` is absent: 500 ms, 64 MiB to 1 GiB, at most 16 passes.
        public static let standard = KDFBounds(
            targetUnlockTime: 0.5, minimumMemoryKiB: 65_536, maximumMemoryKiB: 1_048_576, maximumOpsLimit: 16)

        /// Creates KDF settings.
        /// - Parameters:
        ///   - targetUnlockTime: The unlock time to calibrate for, in seconds.
        ///   - minimumMemoryKiB: The least memory a new vault uses, in KiB.
        ///   - maximumMemoryKiB: The most memory a vault may ask for, in KiB.
        ///   - maximumOpsLimit: The largest pass count a vault may ask for.
        public init(targetUnlockTime: Double, minimumMemoryKiB: Int, maximumMemoryKiB: Int, maximumOpsLimit: Int) {
            self.targetUnlockTime = targetUnlockTime
            self.minimumMemoryKiB = minimumMemoryKiB
            self.maximumMemoryKiB = maximumMemoryKiB
            self.maximumOpsLimit = maximumOpsLimit
        }
    }
}
