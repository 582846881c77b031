import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A JSON value of the command's `--json` output; keys keep their order.
package indirect enum JSONOutput {
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case null
    case array([JSONOutput])
    case object([(String, JSONOutput)])
    /// A secret, written from zeroing memory (only `session get` and `git-credential get`).
    case secret(SecretBytes)

    /// A string, or null.
    package static func string(_ text: String?) -> JSONOutput { text.map { .string($0) } ?? .null }

    /// A UTC time such as `2025-06-01T12:34:56Z`, or null.
    package static func time(_ date: Date?) -> JSONOutput { .string(date.map(formatTime)) }

    /// A count.
    package static func integer(_ value: Int) -> JSONOutput { .integer(Int64(value)) }

    /// The value as text pieces; a secret stays a separate piece so it is never copied into a `String`.
    package func render(into pieces: inout [Piece]) throws {
        switch self {
        case .string(let text): pieces.append(.text(JSONText.quoted(text)))
        case .integer(let value): pieces.append(.text(String(value)))
        case .bool(let value): pieces.append(.text(value ? "true" : "false"))
        case .null: pieces.append(.text("null"))
        case .secret(let secret): pieces.append(.secret(try JSONText.quoted(secret)))
        case .array(let values):
            pieces.append(.text("["))
            for (index, value) in values.enumerated() {
                if index > 0 { pieces.append(.text(",")) }
                try value.render(into: &pieces)
            }
            pieces.append(.text("]"))
        case .object(let fields):
            pieces.append(.text("{"))
            for (index, (key, value)) in fields.enumerated() {
                pieces.append(.text((index > 0 ? "," : "") + JSONText.quoted(key) + ":"))
                try value.render(into: &pieces)
            }
            pieces.append(.text("}"))
        }
    }

    /// A piece of output: text, or a secret's bytes.
    package enum Piece {
        case text(String)
        case secret(SecretBytes)
    }

    /// An object from dotted keys (`backend.kind`), nesting them.
    package static func nested(_ fields: [(String, JSONOutput)]) -> JSONOutput {
        var order: [String] = []
        var leaves: [String: JSONOutput] = [:]
        var groups: [String: [(String, JSONOutput)]] = [:]
        for (key, value) in fields {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if !order.contains(parts[0]) { order.append(parts[0]) }
            if parts.count == 2 {
                groups[parts[0], default: []].append((parts[1], value))
            } else {
                leaves[parts[0]] = value
            }
        }
        return .object(order.map { ($0, groups[$0].map(nested) ?? leaves[$0] ?? .null) })
    }
}

/// A UTC time as `2025-06-01T12:34:56Z`.
package func formatTime(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle())
}
