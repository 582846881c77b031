import Foundation

/// The forms a leaked secret could take in text: raw, base64 (standard and
/// URL-safe, without padding), hex (both cases) and percent-encoded.
/// - Parameter canary: The secret to look for.
/// - Returns: Its encodings.
public func encodings(of canary: String) -> [String] {
    let bytes = Array(canary.utf8)
    let base64 = Data(bytes).base64EncodedString()
    let unpadded = String(base64.prefix { $0 != "=" })
    let hex = bytes.map { String(format: "%02x", $0) }.joined()
    let percent = bytes.map { byte -> String in
        let c = Character(Unicode.Scalar(byte))
        return c.isLetter || c.isNumber ? String(c) : String(format: "%%%02X", byte)
    }.joined()
    return [
        canary, unpadded, unpadded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
        hex, hex.uppercased(), percent, bytes.map { String(format: "%%%02X", $0) }.joined(),
    ]
}

/// The canaries, in any encoding, that occur in `haystack`.
/// - Parameters:
///   - canaries: The secrets to look for.
///   - haystack: Where to look.
/// - Returns: Each leak found, as "canary as encoding".
public func leaks(of canaries: [String], in haystack: [UInt8]) -> [String] {
    let text = String(decoding: haystack, as: UTF8.self)
    return canaries.flatMap { canary in encodings(of: canary).filter { text.contains($0) }.map { "\(canary) as \($0)" }
    }
}

/// Every file below `directory` (names and contents), as one byte string.
/// - Parameter directory: The directory.
/// - Returns: Each path followed by a newline and, for a regular file, its content.
public func everything(below directory: String) throws -> [UInt8] {
    var result: [UInt8] = []
    let files = FileManager.default
    for name in try files.contentsOfDirectory(atPath: directory) {
        let path = directory + "/" + name
        result += Array(path.utf8) + [10]
        let type = try files.attributesOfItem(atPath: path)[.type] as? FileAttributeType
        if type == .typeDirectory {
            result += try everything(below: path)
        } else if type == .typeRegular, let data = files.contents(atPath: path) {
            result += Array(data)
        }
    }
    return result
}
