import Latchkey

/// One credential of docker's credential-helper protocol: what docker sends to
/// `store` and receives from `get`, the JSON object
/// `{"ServerURL": ..., "Username": ..., "Secret": ...}`. With `Username`
/// `<token>`, `Secret` is an identity token (docker's OAuth refresh token).
package struct DockerCredential: Sendable {
    /// The registry.
    package var serverURL: DockerServerURL
    /// The username, or `<token>` for an identity token.
    package var username: String
    /// The password or token.
    package var secret: SecretBytes

    /// Creates a credential.
    package init(serverURL: DockerServerURL, username: String, secret: SecretBytes) {
        self.serverURL = serverURL
        self.username = username
        self.secret = secret
    }

    /// The longest input accepted.
    package static let maximumLength = 1 << 20

    /// Parses what docker writes to `store`, as docker-credential-helpers' Go code reads it
    /// (encoding/json into a struct with the fields `ServerURL`, `Username` and `Secret`): a
    /// key names a field whatever its case, a repeated key's last value wins, a null leaves
    /// the field as it was, and other keys are ignored.
    /// - Parameter input: A JSON object with the string fields `ServerURL`,
    ///   `Username` and `Secret`.
    /// - Returns: The credential.
    /// - Throws: `LatchkeyError` `.invalidInput` naming what is wrong (not JSON,
    ///   a missing, null, empty or non-string field, a bad server URL, input too
    ///   long), never quoting the input, so a secret never reaches a message.
    package static func parse(_ input: SecretBytes) throws -> DockerCredential {
        let name = "the docker credential input"
        guard input.count <= maximumLength else {
            throw LatchkeyError(.invalidInput, "\(name) is longer than \(maximumLength) bytes")
        }
        let members: [(key: String, value: JSONValue)]?
        do {
            members = try input.withUnsafeBytes { try JSONValue.parseMembers($0, source: name) }
        } catch {
            // The parser's message may quote a key or a character of the input, which may be the secret.
            throw LatchkeyError(.invalidInput, "\(name) is not valid JSON")
        }
        guard let members else { throw LatchkeyError(.invalidInput, "\(name) is not a JSON object") }
        var values: [Field: String] = [:]
        var nulls: Set<Field> = []
        for (key, value) in members {
            guard let field = Field(matching: key) else { continue }
            switch value {
            case .string(let text): values[field] = text
            case .null: nulls.insert(field)
            default: throw LatchkeyError(.invalidInput, "\(name)'s '\(field.rawValue)' field is not a string")
            }
        }
        func value(_ field: Field) throws -> String {
            if let value = values[field] { return value }
            throw LatchkeyError(
                .invalidInput,
                nulls.contains(field)
                    ? "\(name)'s '\(field.rawValue)' field is null, not a string"
                    : "\(name) has no '\(field.rawValue)' field (it needs the strings ServerURL, Username and Secret)")
        }
        let serverURLText = try value(.serverURL)
        let username = try value(.username)
        let secret = try value(.secret)
        let serverURL = try DockerServerURL(serverURLText)
        guard !username.isEmpty else { throw LatchkeyError(.invalidInput, "no credentials username") }
        guard !secret.isEmpty else { throw LatchkeyError(.invalidInput, "no credentials secret") }
        return DockerCredential(serverURL: serverURL, username: username, secret: SecretBytes(utf8: secret))
    }

    /// The fields docker sends, by docker's names for them.
    private enum Field: String, CaseIterable {
        case serverURL = "ServerURL"
        case username = "Username"
        case secret = "Secret"

        /// The field `key` names, matched as encoding/json matches a key to a field without a
        /// tag: equal once both are folded (``folded(_:)``), so `secret` and `SECRET` name `Secret`.
        init?(matching key: String) {
            let folded = Self.folded(key)
            guard let field = Self.allCases.first(where: { Self.folded($0.rawValue) == folded }) else { return nil }
            self = field
        }

        /// A key folded as encoding/json folds it to match a field (`foldName`: an ASCII letter
        /// upper-cased, any other character as `unicode.ToUpper(unicode.ToLower(c))`), as far as it
        /// matters for these ASCII names: the only other characters that fold to an ASCII letter
        /// are U+017F (long s) to S, U+212A (Kelvin sign) to K, and U+0130 and U+0131 (Turkish
        /// dotted and dotless i) to I; every other one stays unlike any ASCII name.
        private static func folded(_ key: String) -> [Unicode.Scalar] {
            key.unicodeScalars.map { scalar in
                switch scalar.value {
                case 0x61...0x7A: Unicode.Scalar(scalar.value - 0x20)!
                case 0x17F: "S"
                case 0x212A: "K"
                case 0x130, 0x131: "I"
                default: scalar
                }
            }
        }
    }

    /// The credential as docker reads it from `get`: one JSON object and a newline,
    /// with `serverURL` as docker asked for it.
    /// - Parameter serverURL: The server URL of the request.
    /// - Returns: The bytes, in zeroing memory since they hold the secret.
    /// - Throws: `LatchkeyError` `.invalidInput` when the secret is not UTF-8 (JSON cannot carry it).
    package func json(answering serverURL: String) throws -> SecretBytes {
        SecretBytes(concatenating: [
            SecretBytes(
                utf8:
                    "{\"ServerURL\":\(JSONText.quoted(serverURL)),\"Username\":\(JSONText.quoted(username)),\"Secret\":"
            ),
            try JSONText.quoted(secret),
            SecretBytes(utf8: "}\n"),
        ])
    }
}
