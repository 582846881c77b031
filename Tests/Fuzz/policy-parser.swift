// libFuzzer target for the policy parser: Policy(jsonData:source:), which runs
// the JSON parser and the strict policy reader on untrusted bytes (a policy
// file an admin or a package ships). Parsing may fail, never crash; a document
// that parses must parse again to an equal policy. Compiled with the library's
// sources by `Fuzz/run` (make fuzz).

@_cdecl("LLVMFuzzerTestOneInput")
public func policyParserFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    // Errors are the expected outcome for almost every input; only crashes count.
    guard let policy = try? Policy(jsonData: bytes, source: "fuzz") else { return 0 }
    guard let again = try? Policy(jsonData: bytes, source: "fuzz"), again == policy else {
        preconditionFailure("a policy that parsed once did not parse again to the same value")
    }
    _ = policy.usesFile
    _ = policy.fileFallbackDecision(reason: "fuzz")
    return 0
}
