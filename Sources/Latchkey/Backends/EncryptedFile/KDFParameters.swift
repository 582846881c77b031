/// Argon2id cost parameters for a passphrase-protected vault, as stored in its
/// header (see `docs/FILE-FORMAT.md`).
///
/// Values are refused at construction when libsodium would refuse them or when
/// they exceed what a reader accepts (``maximumOps``, ``maximumMemory``), so a
/// crafted header cannot make a reader hang or exhaust memory.
package struct KDFParameters: Hashable, Sendable, CustomStringConvertible {
    /// The number of Argon2id passes (`opslimit` of `crypto_pwhash`).
    package let opsLimit: UInt64
    /// The memory Argon2id uses, in bytes (`memlimit` of `crypto_pwhash`).
    package let memoryLimit: Int

    /// The fewest passes libsodium accepts (`crypto_pwhash_OPSLIMIT_MIN`).
    package static var minimumOps: UInt64 { Sodium.pwhashMinimumOps }
    /// The least memory libsodium accepts (`crypto_pwhash_MEMLIMIT_MIN`, 8 KiB).
    package static var minimumMemory: Int { Sodium.pwhashMinimumMemory }
    /// The most passes a reader accepts.
    package static let maximumOps: UInt64 = 32
    /// The most memory a reader accepts: 1 GiB.
    package static let maximumMemory = 1 << 30

    /// libsodium's "interactive" parameters (2 passes, 64 MiB).
    package static var interactive: KDFParameters {
        KDFParameters(checked: Sodium.pwhashInteractiveOps, memoryLimit: Sodium.pwhashInteractiveMemory)
    }

    /// Creates parameters, checking them against libsodium's minimums and the reader's caps.
    /// - Parameters:
    ///   - opsLimit: Argon2id passes, ``minimumOps`` through ``maximumOps``.
    ///   - memoryLimit: Bytes of memory, ``minimumMemory`` through ``maximumMemory``
    ///     (any integer type, so a header's 64-bit field is named as it is, not clamped).
    /// - Throws: `LatchkeyError` `.invalidInput` naming the parameter that is out of range.
    package init(opsLimit: UInt64, memoryLimit: some BinaryInteger) throws {
        guard opsLimit >= Self.minimumOps else {
            throw LatchkeyError(
                .invalidInput, "Argon2id operations limit \(opsLimit) is below the minimum \(Self.minimumOps)")
        }
        guard opsLimit <= Self.maximumOps else {
            throw LatchkeyError(
                .invalidInput,
                "Argon2id operations limit \(opsLimit) is above the maximum \(Self.maximumOps) a reader accepts")
        }
        guard memoryLimit >= Self.minimumMemory else {
            throw LatchkeyError(
                .invalidInput, "Argon2id memory limit \(memoryLimit) bytes is below the minimum \(Self.minimumMemory)")
        }
        guard memoryLimit <= Self.maximumMemory else {
            throw LatchkeyError(
                .invalidInput,
                "Argon2id memory limit \(memoryLimit) bytes is above the maximum \(Self.maximumMemory) (1 GiB) a reader accepts"
            )
        }
        self.init(checked: opsLimit, memoryLimit: Int(memoryLimit))
    }

    private init(checked opsLimit: UInt64, memoryLimit: Int) {
        self.opsLimit = opsLimit
        self.memoryLimit = memoryLimit
    }

    /// For example `Argon2id, 3 passes, 64 MiB`.
    package var description: String {
        let memory = memoryLimit >= 1 << 20 ? "\(memoryLimit >> 20) MiB" : "\(memoryLimit >> 10) KiB"
        return "Argon2id, \(opsLimit) pass\(opsLimit == 1 ? "" : "es"), \(memory)"
    }
}
