import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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

    /// Parses what docker writes to `store`.
    /// - Parameter input: A JSON object with the string fields `ServerURL`,
    ///   `Username` and `Secret` (others are ignored, as docker-credential-helpers does).
    /// - Returns: The credential.
    /// - Throws: `LatchkeyError` `.invalidInput` naming what is wrong (not JSON,
    ///   a missing, null, empty or non-string field, a bad server URL, input too
    ///   long), never quoting the input, so a secret never reaches a message.
    package static func parse(_ input: SecretBytes) throws -> DockerCredential {
        guard input.count <= maximumLength else {
            throw LatchkeyError(.invalidInput, "the docker credential input is longer than \(maximumLength) bytes")
        }
        let fields: Fields
        do {
            fields = try input.withUnsafeBytes { try JSONDecoder().decode(Fields.self, from: Data($0)) }
        } catch let error as DecodingError {
            throw LatchkeyError(.invalidInput, describe(error))
        } catch {
            throw LatchkeyError(.invalidInput, "the docker credential input is not a JSON object")
        }
        let serverURL = try DockerServerURL(fields.serverURL)
        guard !fields.username.isEmpty else { throw LatchkeyError(.invalidInput, "no credentials username") }
        guard !fields.secret.isEmpty else { throw LatchkeyError(.invalidInput, "no credentials secret") }
        return DockerCredential(
            serverURL: serverURL, username: fields.username, secret: SecretBytes(utf8: fields.secret))
    }

    /// The fields docker sends.
    private struct Fields: Decodable {
        var serverURL: String
        var username: String
        var secret: String

        /// docker's names for them.
        enum CodingKeys: String, CodingKey {
            case serverURL = "ServerURL"
            case username = "Username"
            case secret = "Secret"
        }
    }

    /// A message for a decoding failure that names the field, never its value.
    private static func describe(_ error: DecodingError) -> String {
        let input = "the docker credential input"
        switch error {
        case .keyNotFound(let key, _):
            return "\(input) has no '\(key.stringValue)' field (it needs the strings ServerURL, Username and Secret)"
        case .valueNotFound(_, let context):
            return "\(input)'s '\(context.codingPath.last?.stringValue ?? "?")' field is null, not a string"
        case .typeMismatch(_, let context):
            guard let field = context.codingPath.last?.stringValue else { return "\(input) is not a JSON object" }
            return "\(input)'s '\(field)' field is not a string"
        case .dataCorrupted:
            return "\(input) is not valid JSON"
        @unknown default:
            return "\(input) is not a JSON object with ServerURL, Username and Secret"
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
