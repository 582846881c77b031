// libFuzzer target for the agent protocol (docs/AGENT.md): AgentMessage.parse,
// which reads what a client sends to `latchkey agent` (header, then fields).
// Parsing may fail, never crash; a message that parses must encode to the same
// bytes (the format has one encoding per message), and parse again to the same
// kind and fields. Compiled with the library's sources by `Fuzz/run` (make fuzz).

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
    return 0
}
