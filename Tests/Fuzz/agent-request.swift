// libFuzzer target for the agent protocol (docs/AGENT.md): AgentMessage.parse,
// which reads what a client sends to `latchkey agent` (header, then fields).
// Parsing may fail, never crash; a message that parses must encode to the same
// bytes (the format has one encoding per message), and parse again to the same
// kind and fields. A `run` request's typed command and namespace (JSON) are decoded as the
// agent decodes them: that may fail, never crash, and a command that decodes must encode and
// decode again to the same value. Compiled with the library's sources by `Fuzz/run` (make fuzz).

@_cdecl("LLVMFuzzerTestOneInput")
public func agentRequestFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    // Errors are the expected outcome for most inputs; only crashes count.
    guard let message = try? AgentMessage.parse(bytes) else { return 0 }
    guard let encoded = try? message.encoded() else {
        preconditionFailure("a parsed message could not be encoded")
    }
    precondition(encoded.copyBytes() == bytes, "a parsed message did not encode to the bytes it came from")
    let again = try! AgentMessage.parse(encoded.copyBytes())
    precondition(
        again.kind == message.kind && again.fields.map(\.tag) == message.fields.map(\.tag)
            && zip(again.fields, message.fields).allSatisfy { $0.value == $1.value },
        "a message did not survive encoding and parsing again")
    if message.kind == .run {
        if let command = message.value(.command), let request = try? StoreRequest(decoding: command) {
            precondition(
                (try? StoreRequest(decoding: request.encoded())) == request,
                "a typed command did not survive encoding and decoding again")
        }
        if let namespace = message.value(.namespace) { _ = try? ResolvedNamespace(decoding: namespace) }
    }
    return 0
}
