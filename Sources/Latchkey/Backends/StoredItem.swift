#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A stored value with the metadata that travels with it.
public struct StoredItem: Sendable, Equatable {
    /// The secret value.
    public let value: SecretBytes
    /// When the value was stored.
    public let created: Date
    /// When the value stops being valid, if ever.
    public let expires: Date?

    /// Creates an item.
    /// - Parameters:
    ///   - value: The secret value.
    ///   - created: When it was stored; now by default.
    ///   - expires: When it stops being valid; nil for never.
    public init(value: SecretBytes, created: Date = Date(), expires: Date? = nil) {
        self.value = value
        self.created = created
        self.expires = expires
    }

    /// Whether the item has expired at `date`.
    /// - Parameter date: The moment to judge; now by default.
    /// - Returns: true when `expires` is at or before `date`.
    public func isExpired(at date: Date = Date()) -> Bool {
        guard let expires else { return false }
        return expires <= date
    }
}
