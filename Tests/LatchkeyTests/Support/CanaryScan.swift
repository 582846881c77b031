#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import Latchkey

/// The forms a leaked secret could take in text: raw, base64 (standard and
/// URL-safe, without padding), hex (both cases) and percent-encoded.
func encodings(of canary: String) -> [String] {
    let bytes = Array(canary.utf8)
    let base64 = Data(bytes).base64EncodedString()
    let unpadded = String(base64.prefix { $0 != "=" })
    let hex = bytes.map { String(format: "%02x", $0) }.joined()
    let percent = bytes.map { byte -> String in
        let c = Character(Unicode.Scalar(byte))
        return c.isLetter || c.isNumber ? String(c) : String(format: "%%%02X", byte)
    }.joined()
    return [canary, unpadded, unpadded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
            hex, hex.uppercased(), percent, bytes.map { String(format: "%%%02X", $0) }.joined()]
}

/// The canaries, in any encoding, that occur in `haystack`.
func leaks(of canaries: [String], in haystack: [UInt8]) -> [String] {
    let text = String(decoding: haystack, as: UTF8.self)
    return canaries.flatMap { canary in encodings(of: canary).filter { text.contains($0) }.map { "\(canary) as \($0)" } }
}

/// Every file below `directory` (names and contents), as one byte string.
func everything(below directory: String) throws -> [UInt8] {
    var result: [UInt8] = []
    for name in try POSIX.directoryEntries(directory) {
        let path = directory + "/" + name
        result += Array(path.utf8) + [10]
        guard let status = try POSIX.status(of: path) else { continue }
        if status.isDirectory { result += try everything(below: path) } else if status.isRegularFile { result += try fileBytes(path) }
    }
    return result
}
