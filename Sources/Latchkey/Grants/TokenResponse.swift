#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Grant {
    /// Reads an OAuth 2.0 token response (RFC 6749 section 5.1): `access_token`
    /// and `token_type` (required), `expires_in`, `refresh_token` and `scope`, and the
    /// common extension `refresh_token_expires_in`; other members are ignored.
    /// - Parameters:
    ///   - tokenResponse: The response's JSON body.
    ///   - received: When it was received, from which `expires_in` counts.
    /// - Throws: `LatchkeyError` `.invalidInput` naming the member that is missing
    ///   or has the wrong type, or the token that holds a character outside RFC 6749's
    ///   VSCHAR (%x20-7E: a newline, a NUL, a terminal escape) (never quoting a value),
    ///   or saying the body is not one JSON object.
    public init(tokenResponse: SecretBytes, received: Date = Date()) throws {
        try self.init(parsing: tokenResponse, received: received)
        try requireVisibleTokens(what: "the token response")
    }

    /// Reads a token response without checking its tokens' characters: a refresh's
    /// answer is checked when it settles, so it is refused (65), not classified as unavailable.
    init(parsing tokenResponse: SecretBytes, received: Date) throws {
        let fields = try TokenEndpointAnswer.object(tokenResponse)
        // Every string of the response is in zeroing memory (the tokens stay there); the
        // token type and scope, which are not secret, become text.
        func secret(_ key: String, required: Bool) throws -> SecretBytes? {
            switch fields[key] {
            case .secret(let value)? where !value.isEmpty:
                return value
            case nil, .null?:
                guard !required else { throw TokenEndpointAnswer.failure("has no \(key)") }
                return nil
            default:
                throw TokenEndpointAnswer.failure("has a \(key) that is not a non-empty string")
            }
        }
        func text(_ key: String, required: Bool) throws -> String? {
            try secret(key, required: required).map { $0.utf8String() ?? "" }
        }
        func seconds(_ key: String) throws -> Date? {
            switch fields[key] {
            case nil, .null?: return nil
            case .integer(let value)? where (0...315_360_000).contains(value):
                return received.addingTimeInterval(TimeInterval(value))
            default: throw TokenEndpointAnswer.failure("has a \(key) that is not a number of seconds")
            }
        }
        guard let access = try secret("access_token", required: true),
            let type = try text("token_type", required: true)
        else { throw TokenEndpointAnswer.failure("has no access_token") }
        self.init(
            accessToken: access, accessTokenExpires: try seconds("expires_in"),
            refreshToken: try secret("refresh_token", required: false),
            refreshTokenExpires: try seconds("refresh_token_expires_in"), tokenType: type,
            scope: try text("scope", required: false))
    }
}

extension RefreshOutcome {
    /// Classifies what a token endpoint answered a refresh request: a token
    /// response (RFC 6749 section 5.1) is ``refreshed(_:)``; the error response
    /// `invalid_grant` (section 5.2: the refresh token is invalid, expired,
    /// revoked or was reused) is ``rejected(reason:)``; anything else (another
    /// error code, which is about the client rather than this session, or a body
    /// that is not a token response) is ``unavailable(reason:)``, keeping the grant.
    /// - Parameters:
    ///   - answer: The response's body.
    ///   - received: When it was received.
    public init(tokenEndpointAnswer answer: SecretBytes, received: Date = Date()) {
        guard let fields = try? TokenEndpointAnswer.object(answer) else {
            self = .unavailable(reason: "the token endpoint's answer is not a JSON object")
            return
        }
        if case .secret(let value)? = fields["error"] {
            let code = value.utf8String() ?? ""
            let shown = TokenEndpointAnswer.isErrorCode(code) ? code : "an unreadable error code"
            self =
                code == "invalid_grant"
                ? .rejected(reason: "invalid_grant") : .unavailable(reason: "the token endpoint answered \(shown)")
            return
        }
        do {
            self = .refreshed(try Grant(parsing: answer, received: received))
        } catch let error as LatchkeyError {
            self = .unavailable(reason: error.message)
        } catch {
            self = .unavailable(reason: "the token endpoint's answer could not be read")
        }
    }
}

extension Grant {
    /// Refuses a grant whose access or refresh token holds a character outside RFC 6749's
    /// VSCHAR (%x20-7E, sections A.12 and A.17): such a token would be stored and printed raw,
    /// and a newline or a terminal escape in it injects a header or controls the terminal.
    /// - Parameter what: Where the grant came from, as the error says.
    /// - Throws: `LatchkeyError` `.invalidInput` naming the token, never quoting it.
    func requireVisibleTokens(what: String) throws {
        for (name, token) in [("access_token", accessToken), ("refresh_token", refreshToken)] {
            guard let token, !token.withUnsafeBytes({ $0.allSatisfy { (0x20...0x7E).contains($0) } }) else { continue }
            throw LatchkeyError(
                .invalidInput,
                "\(what) has a \(name) with a character outside RFC 6749's VSCHAR (%x20-7E); nothing was stored")
        }
    }
}

/// The shared reading of a token endpoint's JSON body.
enum TokenEndpointAnswer {
    /// The body as a JSON object.
    static func object(_ body: SecretBytes) throws -> [String: JSONValue] {
        let value = try JSONParser.parse(secret: body, source: "the token response")
        guard case .object(let fields) = value else { throw failure("is not a JSON object") }
        return fields
    }

    static func failure(_ what: String) -> LatchkeyError {
        LatchkeyError(.invalidInput, "the token response \(what) (RFC 6749 section 5.1); nothing was stored")
    }

    /// Whether `code` may be shown: RFC 6749's error codes are printable ASCII
    /// without quotes or backslashes (section 5.2), and short.
    static func isErrorCode(_ code: String) -> Bool {
        code.utf8.count <= 64 && code.utf8.allSatisfy { (0x20...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C }
    }
}
