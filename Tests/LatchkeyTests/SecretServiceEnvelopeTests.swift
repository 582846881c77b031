import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Secret Service envelope", .sandboxed)
struct SecretServiceEnvelopeTests {
    static let sample = SecretServiceEnvelope(
        account: "Zoë", name: "access",
        item: StoredItem(
            value: SecretBytes(utf8: "tok"), created: Date(timeIntervalSinceReferenceDate: 1.5),
            expires: Date(timeIntervalSinceReferenceDate: 2.25)))

    @Test("an envelope decodes to what was encoded, with and without an expiry")
    func roundTrip() throws {
        let decoded = try SecretServiceEnvelope(decoding: Self.sample.encoded())
        #expect(decoded.account == "Zoë")
        #expect(decoded.name == "access")
        #expect(decoded.item == Self.sample.item)
        let forever = SecretServiceEnvelope(
            account: "", name: "n", item: StoredItem(value: SecretBytes(), created: Date()))
        #expect(try SecretServiceEnvelope(decoding: forever.encoded()).item == forever.item)
    }

    @Test("the layout is the documented one")
    func layout() {
        let bytes = Self.sample.encoded().copyBytes()
        let expected: [UInt8] =
            [1]
            + [0, 0, 0, 4] + Array("Zoë".utf8)
            + [0, 0, 0, 6] + Array("access".utf8)
            + [0, 0, 0, 3] + Array("tok".utf8)
            + [0, 0, 0, 8, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0, 8, 0x40, 0x02, 0, 0, 0, 0, 0, 0]
        #expect(bytes == expected)
    }

    @Test("every truncation is tampered")
    func truncations() {
        let bytes = Self.sample.encoded().copyBytes()
        for length in 0..<bytes.count {
            #expect(throws: LatchkeyError(.tampered, "")) {
                try SecretServiceEnvelope(decoding: SecretBytes(bytes.prefix(length)))
            }
        }
    }

    static func corrupted(_ change: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes = sample.encoded().copyBytes()
        change(&bytes)
        return bytes
    }

    static let corruptions: [(String, [UInt8])] = [
        ("unknown version", corrupted { $0[0] = 2 }),
        ("trailing byte", corrupted { $0.append(0) }),
        ("length past the end", corrupted { $0[1] = 0xff }),
        ("account not UTF-8", corrupted { $0[5] = 0xff }),
        (
            "short time",
            corrupted {
                $0.removeLast(12)
                $0 += [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]
            }
        ),
        (
            "time not finite",
            corrupted { $0.replaceSubrange($0.count - 8..<$0.count, with: [0x7f, 0xf0, 0, 0, 0, 0, 0, 0]) }
        ),
    ]

    @Test("malformed envelopes are tampered", arguments: corruptions)
    func malformed(label: String, bytes: [UInt8]) {
        #expect(throws: LatchkeyError(.tampered, ""), "\(label)") {
            try SecretServiceEnvelope(decoding: SecretBytes(bytes))
        }
    }
}
