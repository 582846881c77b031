import Latchkey

/// A D-Bus value as the provider reads and writes it: the types of the Secret Service
/// API. A byte array is held in `SecretBytes`, since a secret travels as one.
indirect enum DBusValue {
    case string(String)
    case objectPath(String)
    case boolean(Bool)
    case uint64(UInt64)
    case bytes(SecretBytes)
    /// An array of elements of the given D-Bus type (`s`, `o`, `{sv}`, ...).
    case array(String, [DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case tuple([DBusValue])
    case variant(DBusValue)
    /// A value of a type the provider never reads (a number in a client's own property), by its type.
    case other(String)

    /// An `ao`.
    static func paths(_ paths: [String]) -> DBusValue { .array("o", paths.map { .objectPath($0) }) }

    /// An `a{ss}`.
    static func strings(_ map: [String: String]) -> DBusValue {
        .array("{ss}", map.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) })
    }

    /// The text of a `s`, nil for another type.
    var string: String? { if case .string(let text) = self { text } else { nil } }

    /// The path of an `o`, nil for another type.
    var objectPath: String? { if case .objectPath(let path) = self { path } else { nil } }

    /// The elements of an array, nil for another type.
    var elements: [DBusValue]? { if case .array(_, let elements) = self { elements } else { nil } }

    /// The value inside a `v`, or this value.
    var unboxed: DBusValue { if case .variant(let inner) = self { inner.unboxed } else { self } }

    /// The paths of an `ao`, nil for another type.
    var paths: [String]? {
        guard let elements else { return nil }
        let paths = elements.compactMap(\.objectPath)
        return paths.count == elements.count ? paths : nil
    }

    /// The entries of a dictionary (`a{s?}`), keys as text, nil for another type.
    var dictionary: [String: DBusValue]? {
        guard let elements else { return nil }
        var result: [String: DBusValue] = [:]
        for element in elements {
            guard case .dictEntry(.string(let key), let value) = element else { return nil }
            result[key] = value
        }
        return result
    }

    /// The entries of an `a{ss}`, nil for another type.
    var stringDictionary: [String: String]? {
        guard let dictionary else { return nil }
        let result = dictionary.compactMapValues(\.string)
        return result.count == dictionary.count ? result : nil
    }
}

/// A method call, its arguments decoded (nil for one of a type the provider does not read).
struct MethodCall {
    let sender: String
    let path: String
    let interface: String
    let method: String
    let arguments: [DBusValue?]
    /// Answers the call later, when ``SubtreeHandler/call(_:)`` returned nil.
    let reply: MethodReply
}

/// The interfaces an object path serves (the `LK_PROVIDER_*` bits of CLatchkeySecret).
struct Interfaces: OptionSet {
    let rawValue: UInt32
    static let service = Interfaces(rawValue: 1)
    static let collection = Interfaces(rawValue: 2)
    static let item = Interfaces(rawValue: 4)
    static let session = Interfaces(rawValue: 8)
    static let prompt = Interfaces(rawValue: 16)
    /// Latchkey's own interface on the service object (`io.github.latchkey.SecretService`).
    static let latchkey = Interfaces(rawValue: 32)
}

/// What serves a registered subtree; GDBus calls it on the provider's thread only.
protocol SubtreeHandler: AnyObject {
    /// The call's answer; nil when the handler answers it later, through `call.reply`.
    func call(_ call: MethodCall) -> Result<[DBusValue], ProviderError>?
    /// Called once each answer to a call is handed to GDBus (which sends it from its own thread).
    func answered()
    func property(_ path: String, _ interface: String, _ name: String) -> Result<DBusValue, ProviderError>
    func setProperty(_ sender: String, _ path: String, _ interface: String, _ name: String, _ value: DBusValue?)
        -> Result<
            Void, ProviderError
        >
    func interfaces(_ path: String) -> Interfaces
    func children(_ path: String) -> [String]
}
