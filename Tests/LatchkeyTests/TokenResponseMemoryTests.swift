import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// What reading a token response leaves in the process's memory once its values are
/// released: nothing of its tokens (the agent reads every rotation's answer).
@Suite("Token responses in memory", .sandboxed)
struct TokenResponseMemoryTests {
    /// Whether the bytes of `pattern` occur anywhere in this process's writable memory
    /// (where every copy made at run time lies) outside the pattern's own (guarded)
    /// pages. The pattern is never copied: it is compared in place, and the memory is
    /// read a region at a time.
    static func occursInMemory(_ pattern: SecretBytes) throws -> Bool {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        let memory = open("/proc/self/mem", O_RDONLY)
        try #require(memory >= 0, "/proc/self/mem cannot be opened")
        defer { close(memory) }
        return pattern.withUnsafeBytes { needle in
            let own = UInt(bitPattern: needle.baseAddress)
            var chunk = [UInt8](repeating: 0, count: 1 << 24)
            for line in maps.split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
                let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
                guard bounds.count == 2, bounds[1] > bounds[0], !(bounds[0]..<bounds[1]).contains(own) else {
                    continue
                }
                var start = bounds[0]
                while start < bounds[1] {
                    let length = Int(min(UInt(chunk.count), bounds[1] - start))
                    let read = chunk.withUnsafeMutableBytes { pread(memory, $0.baseAddress, length, off_t(start)) }
                    guard read > 0 else { break }
                    let found = chunk.withUnsafeBytes {
                        Self.contains(UnsafeRawBufferPointer(rebasing: $0[..<read]), needle)
                    }
                    if found { return true }
                    // Overlap the next read, so a pattern across two reads is seen.
                    start += UInt(max(read - needle.count, 1))
                }
            }
            return false
        }
    }

    /// Whether `needle` occurs in `haystack` (`memchr` for its first byte, then `memcmp`).
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        guard let base = haystack.baseAddress, let pattern = needle.baseAddress, haystack.count >= needle.count
        else { return false }
        let end = base + (haystack.count - needle.count + 1)
        var cursor = base
        while cursor < end, let hit = memchr(cursor, Int32(needle[0]), end - cursor) {
            if memcmp(hit, pattern, needle.count) == 0 { return true }
            cursor = UnsafeRawPointer(hit) + 1
        }
        return false
    }

    @Test(
        "reading a token response and releasing the grant leaves no copy of its access or refresh token in memory",
        .enabled(if: getuid() == 0, "reading the memory of a process that is not dumpable needs root"),
        // The scan reads the whole test process: with hundreds of tests running beside it, it
        // took 5 minutes and once missed the token it held (CI). So it runs in a pass of its own.
        .enabled(
            if: ProcessInfo.processInfo.environment["LATCHKEY_MEMORY_SCAN_TESTS"] == "1",
            "reads the whole process's memory, so alone: run `make test` (its pass with LATCHKEY_MEMORY_SCAN_TESTS=1)"))
    func noCopyLeft() throws {
        // Tokens of 3,000 random letters, made in zeroing memory only: no other copy exists.
        let tokenLength = 3000
        let prefix = Array(#"{"token_type":"Bearer","expires_in":60,"access_token":""#.utf8)
        let middle = Array(#"","refresh_token":""#.utf8)
        let suffix = Array(#""}"#.utf8)
        let body = SecretBytes(count: prefix.count + middle.count + suffix.count + 2 * tokenLength) { out in
            var offset = 0
            for part in [prefix, nil, middle, nil, suffix] {
                if let part {
                    for byte in part {
                        out[offset] = byte
                        offset += 1
                    }
                } else {
                    for _ in 0..<tokenLength {
                        out[offset] = UInt8(ascii: "a") + UInt8.random(in: 0..<26)
                        offset += 1
                    }
                }
            }
        }
        // What to look for, in guarded pages of their own (skipped by the scan): each token's first 64 bytes.
        func pattern(at start: Int) -> SecretBytes {
            SecretBytes(count: 64, guarded: true) { out in
                body.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<start + 64])) }
            }
        }
        let access = pattern(at: prefix.count)
        let refresh = pattern(at: prefix.count + tokenLength + middle.count)
        do {
            let outcome = RefreshOutcome(tokenEndpointAnswer: body)
            guard case .refreshed(let grant) = outcome else {
                Issue.record("the response was not read as a token response")
                return
            }
            #expect(grant.accessToken.count == tokenLength && grant.refreshToken?.count == tokenLength)
        }
        do {
            let grant = try Grant(tokenResponse: body)
            #expect(grant.accessToken.count == tokenLength)
            // While the grant is held the scan finds its token (so a miss below means something).
            #expect(try Self.occursInMemory(access), "the scan does not find a token the grant holds")
            withExtendedLifetime(grant) {}
        }
        // The grants are released (zeroed); the body is overwritten here.
        body.withUnsafeBytes { bytes in
            _ = UnsafeMutableRawBufferPointer(mutating: bytes).initializeMemory(as: UInt8.self, repeating: 0)
        }
        #expect(try !Self.occursInMemory(access), "a copy of the access token is left in memory")
        #expect(try !Self.occursInMemory(refresh), "a copy of the refresh token is left in memory")
    }

    @Test(
        "a document parsed as secret has its string values, escapes decoded, as SecretBytes, and the same errors",
        arguments: [
            #"{"a":"plain","b":["x\u00e9\ud83d\ude00\n\"y\\/z"],"c":{"d":""}}"#, #"{"a":"open"#, #"{"a":"\q"}"#,
            #"{"a":"\ud800"}"#, "{\"a\":\"\u{01}\"}", #"{"a":1,"a":2}"#,
        ])
    func secretParse(document: String) throws {
        let plain = Result { try JSONValue.parse(Array(document.utf8), source: "t") }
        let secret = Result { try JSONParser.parse(secret: SecretBytes(utf8: document), source: "t") }
        // The same tree, each string value moved into zeroing memory; the same error otherwise.
        func revealed(_ value: JSONValue) -> JSONValue {
            switch value {
            case .secret(let bytes): .string(bytes.utf8String() ?? "not UTF-8")
            case .array(let elements): .array(elements.map(revealed))
            case .object(let fields): .object(fields.mapValues(revealed))
            default: value
            }
        }
        switch (plain, secret) {
        case (.success(let plainValue), .success(let secretValue)):
            #expect(revealed(secretValue) == plainValue)
            #expect(!"\(secretValue)".contains("plain"), "a secret value is not shown")
        case (.failure(let plainError), .failure(let secretError)):
            #expect("\(plainError)" == "\(secretError)")
        default:
            Issue.record("plain \(plain), secret \(secret)")
        }
    }
}
