import Latchkey

/// A registry's server URL as docker sends it to a credential helper, and the
/// key it is matched by.
///
/// docker-credential-helpers (`registryurl.Parse`) accepts `http`, `https` or
/// no scheme, requires a host, and drops the query; its helpers then match by
/// host, port and path. So `https://registry.example:5000/`,
/// `registry.example:5000` and `http://Registry.example:5000` are one registry
/// here: the ``key`` is the lower-cased host with its port, then the path
/// without trailing slashes (`registry.example:5000`, `index.docker.io/v1`).
package struct DockerServerURL: Sendable, Hashable {
    /// The URL as docker gave it (surrounding white space removed); `list` reports it back.
    package let original: String
    /// The host (lower-cased) with its port, and the path without trailing slashes.
    package let key: String

    /// The longest server URL accepted.
    package static let maximumLength = 2048

    /// Parses a server URL.
    /// - Parameter text: The URL, such as `https://index.docker.io/v1/` or `127.0.0.1:5000`.
    /// - Throws: `LatchkeyError` `.invalidInput` when it is empty or too long, holds
    ///   white space or control characters, has a scheme other than `http` or
    ///   `https`, has no host, or has an authority Go's `net/url` refuses (user
    ///   information or a host with a character RFC 3986 does not allow there,
    ///   such as `\`, or a port that is not a number), so that no text is read
    ///   as another registry than docker's own helpers read it. The message never repeats the URL.
    package init(_ text: String) throws {
        let original = String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        guard !original.isEmpty else { throw LatchkeyError(.invalidInput, "no credentials server URL") }
        guard original.utf8.count <= Self.maximumLength else {
            throw LatchkeyError(.invalidInput, "the server URL is longer than \(Self.maximumLength) bytes")
        }
        guard
            !original.unicodeScalars.contains(where: {
                $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
            })
        else {
            throw LatchkeyError(.invalidInput, "the server URL holds white space or a control character")
        }
        var rest = Substring(original)
        if let separator = rest.firstRange(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw LatchkeyError(.invalidInput, "the server URL's scheme is not http or https")
            }
            rest = rest[separator.upperBound...]
        }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count).drop { $0 == "/" }
        let at = authority.lastIndex(of: "@")
        // As Go's net/url (which docker's own helpers parse with): what precedes the last `@`
        // is user information only when it is made of the characters RFC 3986 allows there.
        if let at, !authority[..<at].utf8.allSatisfy(Self.isUserInformation) {
            throw LatchkeyError(
                .invalidInput, "the server URL's user information (before '@') holds a character a URL does not allow")
        }
        let hostAndPort = at.map { authority[authority.index(after: $0)...] } ?? authority
        let host: Substring
        let port: Substring
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.lastIndex(of: "]") else {
                throw LatchkeyError(.invalidInput, "the server URL's host has '[' without ']'")
            }
            host = hostAndPort[...close]
            port = hostAndPort[hostAndPort.index(after: close)...]
        } else {
            let colon = hostAndPort.lastIndex(of: ":") ?? hostAndPort.endIndex
            host = hostAndPort[..<colon]
            port = hostAndPort[colon...]
        }
        guard port.isEmpty || (port.first == ":" && port.utf8.dropFirst().allSatisfy { (48...57).contains($0) })
        else {
            throw LatchkeyError(.invalidInput, "the server URL's port is not a number")
        }
        guard host.utf8.allSatisfy(Self.isHostCharacter) else {
            throw LatchkeyError(.invalidInput, "the server URL's host holds a character a host name cannot have")
        }
        guard !host.isEmpty, host != "[]" else {
            throw LatchkeyError(.invalidInput, "no hostname in the server URL")
        }
        var trimmedPath = Substring(path)
        while trimmedPath.last == "/" { trimmedPath = trimmedPath.dropLast() }
        self.original = original
        self.key = hostAndPort.lowercased() + (trimmedPath.isEmpty ? "" : "/" + trimmedPath)
    }

    /// Whether `byte` may stand in user information, as Go's `net/url` (`validUserinfo`)
    /// allows: letters, digits, `-._~`, the sub-delimiters `!$&'()*+,;=`, `:`, `%` and `@`.
    private static func isUserInformation(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || "-._~!$&'()*+,;=:%@".utf8.contains(byte)
    }

    /// Whether `byte` may stand in a host, as Go's `net/url` allows there (`shouldEscape` for
    /// a host): letters, digits, `-._~`, the sub-delimiters, `:[]<>"`, `%` and any byte of a
    /// non-ASCII character; never `\`, `{`, `}`, `|`, `^` or a back quote.
    private static func isHostCharacter(_ byte: UInt8) -> Bool {
        byte >= 0x80 || isAlphanumeric(byte) || "-._~!$&'()*+,;=:[]<>\"%".utf8.contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
    }
}
