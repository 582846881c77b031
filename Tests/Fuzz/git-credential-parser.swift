// libFuzzer target for git's credential-helper input: GitCredentialMessage.parse,
// which reads what git writes to the helper's stdin. Parsing may fail, never
// crash; a message that parses must serialize, and the serialized text must
// parse again to the same protocol, host, username, password, expiry and
// refresh token. Compiled with the library's sources by `Fuzz/run` (make fuzz).

@_cdecl("LLVMFuzzerTestOneInput")
public func gitCredentialParserFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    // Errors are the expected outcome for most inputs; only crashes count.
    guard let message = try? GitCredentialMessage.parse(SecretBytes(bytes)) else { return 0 }
    let text = message.serialized()
    guard let again = try? GitCredentialMessage.parse(text) else {
        preconditionFailure("the serialized form of a parsed message did not parse")
    }
    precondition(
        again.protocolName == message.protocolName && again.host == message.host
            && again.username == message.username && again.password == message.password
            && again.passwordExpiry == message.passwordExpiry && again.oauthRefreshToken == message.oauthRefreshToken,
        "a parsed message did not survive serializing and parsing again")
    return 0
}
