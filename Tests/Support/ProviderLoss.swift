import Foundation

/// Plays a Secret Service provider that lost what it acknowledged (KWallet 5.103
/// stopped within 5 s of a change keeps the item with an empty secret): every item
/// of `app` matching `attributes` gets an empty secret, through `secret-tool`,
/// behind Latchkey's back. The honest stand-in `make test` has; `make interop`
/// kills the real KWallet.
/// - Parameters:
///   - app: The app id (the `app` attribute).
///   - attributes: Further attributes to match, such as `["kind": "session", "name": "access"]`.
/// - Returns: How many items lost their value.
@discardableResult
public func loseValues(app: String, _ attributes: [String: String]) throws -> Int {
    let query = ["app", app] + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
    let found = try runProgram("secret-tool", ["search", "--all"] + query)
    // One block per item (secret-tool prints the attributes on standard error): "[path]", then "label = ", ..., "attribute.NAME = VALUE" lines.
    var items: [[String: String]] = []
    for line in (found.text + "\n" + found.stderr).split(separator: "\n", omittingEmptySubsequences: false).map(
        String.init)
    {
        if line.hasPrefix("[") { items.append([:]) }
        if line.hasPrefix("attribute."), let equals = line.range(of: " = "), !items.isEmpty {
            items[items.count - 1][String(line[line.index(line.startIndex, offsetBy: 10)..<equals.lowerBound])] =
                String(line[equals.upperBound...])
        }
    }
    for item in items {
        let stored = try runProgram(
            "secret-tool",
            ["store", "--label=lost", "xdg:schema", "io.github.latchkey.Item"]
                + item.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }, input: "")
        guard stored.status == 0 else { throw ProviderLossError(message: stored.stderr) }
    }
    return items.count
}

/// `secret-tool store` failed.
public struct ProviderLossError: Error {
    public let message: String
}
