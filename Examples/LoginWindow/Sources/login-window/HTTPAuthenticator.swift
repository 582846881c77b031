import Foundation
import Latchkey
import LatchkeyLoginFlow

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Signs in over HTTP: `POST <server>` with a JSON body `{"username": ..., "password": ...}`.
///
/// The answer's status decides the class: 200 with `access_token` (and
/// optionally `refresh_token`, `expires_in` seconds) is a session; 401 is
/// invalid credentials; 423 a locked account; 429 a rate limit for the
/// `Retry-After` seconds; any 5xx a server error; anything else, or a body
/// that is not what 200 promises, a malformed response. A refused or dropped
/// connection is "network unreachable"; no answer within the timeout, "timed out".
///
/// The password goes only into the request body; it is never logged, and the
/// body is built from its bytes without a Swift `String` of it.
struct HTTPAuthenticator: Authenticator {
    /// Where to sign in.
    let server: URL
    /// How long to wait for an answer.
    let timeout: Duration

    func authenticate(username: String, password: SecretBytes) async -> AuthenticationResult {
        var request = URLRequest(url: server)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Self.body(username: username, password: password)
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        do {
            let (data, response) = try await session.data(for: request)
            if Task.isCancelled { return .failure(.cancelled) }
            guard let response = response as? HTTPURLResponse else { return .failure(.malformedResponse) }
            return Self.result(
                status: response.statusCode, retryAfter: response.value(forHTTPHeaderField: "Retry-After"), body: data)
        } catch {
            if Task.isCancelled { return .failure(.cancelled) }
            return .failure(Self.failure(for: error))
        }
    }

    /// The class of a transport error.
    static func failure(for error: any Error) -> LoginFailure {
        guard let error = error as? URLError else { return .networkUnreachable }
        switch error.code {
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        // URLSession reports a connection closed before any answer ("empty reply") as a bad
        // server response: the connection dropped, which is a network problem.
        case .badServerResponse, .networkConnectionLost: return .networkUnreachable
        case .cannotParseResponse, .cannotDecodeContentData, .cannotDecodeRawData: return .malformedResponse
        default: return .networkUnreachable
        }
    }

    /// The class of an HTTP answer.
    static func result(status: Int, retryAfter: String?, body: Data) -> AuthenticationResult {
        switch status {
        case 200:
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                let access = object["access_token"] as? String, !access.isEmpty
            else { return .failure(.malformedResponse) }
            let refresh = (object["refresh_token"] as? String).map { SecretBytes(utf8: $0) }
            let expires = (object["expires_in"] as? Double).map { Date().addingTimeInterval($0) }
            // Not in RFC 6749, but Keycloak and others say when the refresh token ends.
            let refreshExpires = (object["refresh_expires_in"] as? Double).map { Date().addingTimeInterval($0) }
            return .success(
                SessionTokens(
                    accessToken: SecretBytes(utf8: access), refreshToken: refresh, expires: expires,
                    refreshTokenExpires: refreshExpires))
        case 401: return .failure(.invalidCredentials)
        case 423: return .failure(.accountLocked)
        case 429:
            let seconds = retryAfter.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 30
            return .failure(.rateLimited(retryAfter: .seconds(max(1, seconds))))
        case 500...599: return .failure(.serverError)
        default: return .failure(.malformedResponse)
        }
    }

    /// The JSON request body, escaping the password byte by byte.
    static func body(username: String, password: SecretBytes) -> Data {
        var body = Data("{\"username\":".utf8)
        appendJSONString(Array(username.utf8), to: &body)
        body.append(contentsOf: Array(",\"password\":".utf8))
        password.withUnsafeBytes { appendJSONString($0, to: &body) }
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// Appends `bytes` (UTF-8) as a JSON string literal.
    private static func appendJSONString(_ bytes: some Sequence<UInt8>, to body: inout Data) {
        let hex = Array("0123456789abcdef".utf8)
        body.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                body.append(UInt8(ascii: "\\"))
                body.append(byte)
            case 0..<0x20:
                body.append(contentsOf: Array("\\u00".utf8))
                body.append(hex[Int(byte >> 4)])
                body.append(hex[Int(byte & 0xF)])
            default:
                body.append(byte)
            }
        }
        body.append(UInt8(ascii: "\""))
    }
}
