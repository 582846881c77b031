/// An app's namespace, such as `com.example.notes`.
///
/// An app id is 1 to 128 characters from `A-Z a-z 0-9 . _ -`, and does not start
/// with a dot or a dash, so it is safe as a file name and as a Secret Service
/// attribute. Invalid ids are refused at construction.
public struct AppID: Hashable, Sendable, CustomStringConvertible {
    /// The id's text.
    public let rawValue: String

    /// Creates an app id, or throws when `rawValue` is not a valid one.
    /// - Parameter rawValue: The app id, such as `com.example.notes`.
    /// - Throws: `LatchkeyError` `.invalidInput` naming what is wrong.
    public init(_ rawValue: String) throws {
        guard !rawValue.isEmpty else {
            throw LatchkeyError(.invalidInput, "app id is empty")
        }
        guard rawValue.utf8.count <= 128 else {
            throw LatchkeyError(.invalidInput, "app id is longer than 128 characters")
        }
        guard rawValue.utf8.allSatisfy(AppID.isAllowed) else {
            throw LatchkeyError(.invalidInput, "app id '\(rawValue)' may only contain A-Z, a-z, 0-9, '.', '_' and '-'")
        }
        guard let first = rawValue.first, first != ".", first != "-" else {
            throw LatchkeyError(.invalidInput, "app id '\(rawValue)' must not start with '.' or '-'")
        }
        self.rawValue = rawValue
    }

    /// Creates an app id from bytes, such as a C string's, refusing bytes that are not
    /// valid UTF-8 rather than reading them with other characters in their place.
    /// - Parameter utf8: The app id's bytes.
    /// - Throws: `LatchkeyError` `.invalidInput` saying the app id is not UTF-8, or as ``init(_:)``.
    public init(utf8: some Collection<UInt8>) throws {
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw LatchkeyError(.invalidInput, "the app id is not valid UTF-8")
        }
        try self.init(text)
    }

    /// The id's text.
    public var description: String { rawValue }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
