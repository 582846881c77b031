#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LatchkeyError: LocalizedError {
    /// The message, with the failing C function where there is one (``description``),
    /// so that `localizedDescription` shows what went wrong.
    public var errorDescription: String? { description }
}
