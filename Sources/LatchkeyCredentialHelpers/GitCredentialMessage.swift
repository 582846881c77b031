import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One message of git's credential-helper protocol: `key=value` lines ended by
/// a blank line or the end of input (see the git-credential manual page).
///
/// Secrets (`password`, `oauth_refresh_token`) are held in ``SecretBytes``.
/// Keys git may add in future versions are kept in ``otherAttributes`` and
/// otherwise ignored, as the protocol asks of helpers.
package struct GitCredentialMessage: Sendable {
    /// The protocol, such as `https`.
    package var protocolName: String?
    /// The host, with a port when there is one.
    package var host: String?
    /// The path, when `credential.useHttpPath` is set.
    package var path: String?
    /// The username.
    package var username: String?
    /// The password or token.
    package var password: SecretBytes?
    /// When the password stops being valid (`password_expiry_utc`), as git gave
    /// it; nil when git gave none or gave `0`, which git itself reads as "never".
    package var passwordExpiry: Date?
    /// An OAuth refresh token.
    package var oauthRefreshToken: SecretBytes?
    /// `capability[]` values git announced.
    package var capabilities: [String] = []
    /// `wwwauth[]` values: the server's `WWW-Authenticate` headers.
    package var wwwAuthenticate: [String] = []
    /// `state[]` values: a helper's opaque state that git passes back.
    package var state: [String] = []
    /// Any other attributes, in order; never secrets that Latchkey knows of.
    package var otherAttributes: [(key: String, value: String)] = []

    /// Creates an empty message.
    package init() {}

    /// The longest message accepted.
    package static let maximumLength = 1 << 20

    /// The latest `password_expiry_utc` accepted, in seconds since 1970 (2^40, in the year 36812).
    static let latestExpiry: Int64 = 1 << 40

    /// Parses a message.
    /// - Parameter input: The bytes git wrote to the helper's standard input.
    /// - Returns: The message.
    /// - Throws: `LatchkeyError` `.invalidInput` naming the line number (never
    ///   its value) when the input holds a NUL anywhere, a line has no `=`, a key is empty,
    ///   a timestamp is not a number, a `url` cannot be parsed (so it can never
    ///   match every host), or the text is not UTF-8.
    package static func parse(_ input: SecretBytes) throws -> GitCredentialMessage {
        guard input.count <= maximumLength else {
            throw LatchkeyError(.invalidInput, "credential input is longer than \(maximumLength) bytes")
        }
        var message = GitCredentialMessage()
        try input.withUnsafeBytes { bytes in
            // Anywhere, in a key as in a value, and after the blank line that ends the message.
            if let nul = bytes.firstIndex(of: 0) {
                let line = bytes[..<nul].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
                throw LatchkeyError(.invalidInput, "credential line \(line) contains a NUL byte")
            }
            var lineNumber = 0
            var rest = bytes[...]
            // Line by line, without collecting the lines first (an array of slices cost a
            // process about 0.1 ms of Swift runtime set-up, more than the parse).
            while true {
                let newline = rest.firstIndex(of: UInt8(ascii: "\n"))
                var line = rest[..<(newline ?? rest.endIndex)]
                lineNumber += 1
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                if line.isEmpty { break }
                guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                    throw LatchkeyError(.invalidInput, "credential line \(lineNumber) has no '='")
                }
                let keyBytes = line[..<equals]
                let valueBytes = line[line.index(after: equals)...]
                guard let key = String(validating: keyBytes, as: UTF8.self), !key.isEmpty else {
                    throw LatchkeyError(.invalidInput, "credential line \(lineNumber) has an empty or non-UTF-8 key")
                }
                // A carriage return left inside a value (after the line's CRLF) could not be
                // written back faithfully, and git itself refuses such values (credential.protectProtocol).
                guard !valueBytes.contains(UInt8(ascii: "\r")) else {
                    throw LatchkeyError(.invalidInput, "credential attribute '\(key)' contains a carriage return")
                }
                try message.set(key: key, value: valueBytes, line: lineNumber)
                guard let newline else { break }
                rest = rest[rest.index(after: newline)...]
            }
        }
        return message
    }

    private mutating func set(key: String, value: Slice<UnsafeRawBufferPointer>, line: Int) throws {
        switch key {
        case "password":
            password = SecretBytes(value)
            return
        case "oauth_refresh_token":
            oauthRefreshToken = SecretBytes(value)
            return
        default:
            break
        }
        guard let text = String(validating: value, as: UTF8.self) else {
            throw LatchkeyError(.invalidInput, "credential attribute '\(key)' is not UTF-8")
        }
        switch key {
        case "protocol": protocolName = text
        case "host": host = text
        case "path": path = text
        case "username": username = text
        case "password_expiry_utc":
            // Bounded so the time converts back to the same whole number of seconds.
            guard let seconds = Int64(text), (0...Self.latestExpiry).contains(seconds) else {
                throw LatchkeyError(.invalidInput, "credential attribute 'password_expiry_utc' is not a Unix time")
            }
            // 0 is git's "no expiry" (credential.c reads it as TIME_MAX), not 1970.
            passwordExpiry = seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
        case "url": try applyURL(text)
        case "capability[]": text.isEmpty ? capabilities.removeAll() : capabilities.append(text)
        case "wwwauth[]": text.isEmpty ? wwwAuthenticate.removeAll() : wwwAuthenticate.append(text)
        case "state[]": text.isEmpty ? state.removeAll() : state.append(text)
        default: otherAttributes.append((key, text))
        }
    }

    /// Fills protocol, username, host and path from a `url` attribute, as git
    /// itself does before it calls a helper.
    /// - Throws: `.invalidInput` (never quoting the URL, which may hold a
    ///   password) when it has no `<scheme>://`, as git's own helpers die with
    ///   "unable to parse url": a request without protocol and host would match
    ///   every stored credential.
    private mutating func applyURL(_ url: String) throws {
        guard let schemeEnd = url.firstRange(of: "://"), schemeEnd.lowerBound != url.startIndex else {
            throw LatchkeyError(.invalidInput, "credential attribute 'url' cannot be parsed (it has no '<scheme>://')")
        }
        protocolName = String(url[..<schemeEnd.lowerBound])
        var rest = url[schemeEnd.upperBound...]
        if let slash = rest.firstIndex(of: "/") {
            let pathPart = rest[rest.index(after: slash)...]
            path = pathPart.isEmpty ? nil : try Self.percentDecoded(pathPart)
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            username = try Self.percentDecoded(
                user.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? user)
            rest = rest[rest.index(after: at)...]
        }
        // Set even when empty, as git does: an empty host matches only an empty host.
        host = try Self.percentDecoded(rest)
    }

    /// A URL part with its `%XX` escapes decoded, as git decodes them.
    /// - Throws: `LatchkeyError` `.invalidInput` when the result holds a control
    ///   character or is not UTF-8 (git's `credential.protectProtocol` refuses those too).
    private static func percentDecoded(_ text: Substring) throws -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), rest.prefix(2).count == 2,
                rest.prefix(2).allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                rest = rest.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self),
            !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            throw LatchkeyError(
                .invalidInput,
                "credential attribute 'url' holds an escaped control character or bytes that are not UTF-8")
        }
        return decoded
    }

    /// The message as protocol lines, for a helper's answer to `get`: only the
    /// attributes that are set (an empty username is set: `username=`), secrets
    /// included, in the order git writes them (`credential_write`: protocol,
    /// host, path, username, password, oauth_refresh_token,
    /// password_expiry_utc); no blank line at the end.
    /// - Returns: The bytes, in zeroing memory since they hold the password.
    package func serialized() -> SecretBytes {
        var lines: [(String, SecretBytes)] = []
        func add(_ key: String, _ value: String?) {
            if let value { lines.append((key, SecretBytes(utf8: value))) }
        }
        add("protocol", protocolName)
        add("host", host)
        add("path", path)
        add("username", username)
        if let password { lines.append(("password", password)) }
        if let oauthRefreshToken { lines.append(("oauth_refresh_token", oauthRefreshToken)) }
        if let passwordExpiry, let seconds = Int64(exactly: passwordExpiry.timeIntervalSince1970.rounded(.down)) {
            add("password_expiry_utc", String(seconds))
        }
        return SecretBytes(
            concatenating: lines.flatMap { key, value in
                [SecretBytes(utf8: key + "="), value, SecretBytes(utf8: "\n")]
            })
    }
}
