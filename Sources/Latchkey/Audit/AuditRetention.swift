#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How much of an audit trail is kept: at most ``maxEntries`` lines and/or
/// nothing older than ``maxAge``. A nil bound is no bound.
///
/// Trimming keeps the newest entries and starts the file with an
/// `audit.checkpoint` entry, so the chain stays verifiable (see `docs/AUDIT-TRAIL.md`).
public struct AuditRetention: Sendable, Equatable {
    /// The most lines the trail keeps, the checkpoint included; nil for no bound.
    /// When an append goes over it, the trail is trimmed to 90 % of it, so
    /// trimming (a whole-file rewrite) happens once per tenth of the bound.
    public internal(set) var maxEntries: Int?
    /// The age, in seconds, after which an entry is dropped; nil for no bound.
    public internal(set) var maxAge: TimeInterval?

    /// Keeps everything.
    public static let unbounded = AuditRetention(maxEntries: nil, maxAge: nil)

    /// Creates a retention rule.
    /// - Parameters:
    ///   - maxEntries: The most lines kept (at least 10), or nil for no bound.
    ///   - maxAge: The age in seconds after which entries are dropped (positive), or nil.
    public init(maxEntries: Int?, maxAge: TimeInterval?) {
        precondition(maxEntries.map { $0 >= 10 } ?? true, "an audit trail keeps at least 10 entries")
        precondition(maxAge.map { $0 > 0 } ?? true, "an audit retention age must be positive")
        self.maxEntries = maxEntries
        self.maxAge = maxAge
    }
}
