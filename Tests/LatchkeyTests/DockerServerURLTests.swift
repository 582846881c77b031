import Testing

@testable import Latchkey
@testable import LatchkeyCredentialHelpers

@Suite("Docker server URLs", .sandboxed)
struct DockerServerURLTests {
    @Test(
        "matched as docker-credential-helpers match them: host[:port] and path, no scheme, no trailing slash",
        arguments: [
            ("registry.example:5000", "registry.example:5000"),
            ("https://registry.example:5000/", "registry.example:5000"),
            ("http://Registry.Example:5000", "registry.example:5000"),
            ("https://index.docker.io/v1/", "index.docker.io/v1"),
            ("index.docker.io/v1", "index.docker.io/v1"),
            ("HTTPS://user@ghcr.io/team//?q=1#f", "ghcr.io/team"),
            ("[::1]:5000", "[::1]:5000"),
            ("  127.0.0.1:5000\n", "127.0.0.1:5000"),
        ])
    func key(url: String, key: String) throws {
        #expect(try DockerServerURL(url).key == key)
    }

    @Test("the URL is kept as docker gave it, without surrounding white space")
    func original() throws {
        #expect(try DockerServerURL(" https://index.docker.io/v1/\n").original == "https://index.docker.io/v1/")
    }

    @Test(
        "refused without repeating the URL",
        arguments: ["", "  \n", "ftp://r.example", "https://", "https:///v2", "r.example/a b", "r.example\u{7}"])
    func refused(url: String) {
        let error = #expect(throws: LatchkeyError.self) { try DockerServerURL(url) }
        #expect(error?.code == .invalidInput)
        #expect(url.isEmpty || error?.message.contains(url) == false)
    }

    @Test(
        "an authority Go's net/url refuses is refused, not read as another registry",
        arguments: [
            "https://evil.com\\@registry.example.com", "evil.com\\@registry.example.com",
            "https://ev{il@registry.example.com", "https://reg\\istry.example.com", "https://registry.example.com:5o00",
            "https://[::1", "https://a|b@registry.example.com/v2", "https://registry.example.com\\",
        ])
    func authorityRefused(url: String) {
        let error = #expect(throws: LatchkeyError.self) { try DockerServerURL(url) }
        #expect(error?.code == .invalidInput)
    }

    @Test(
        "user information Go's net/url takes is dropped from the key, as docker's helpers drop it",
        arguments: [
            ("https://user:p%40ss@registry.example.com/", "registry.example.com"),
            ("https://a@b@registry.example.com:5000", "registry.example.com:5000"),
            ("https://x@[::1]:5000/v2", "[::1]:5000/v2"),
        ])
    func userInformation(url: String, key: String) throws {
        #expect(try DockerServerURL(url).key == key)
    }
}
