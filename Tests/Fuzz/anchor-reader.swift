// libFuzzer target for the audit anchor reader (AuditAnchorFile.contents(of:appID:key:))
// and the end-of-trail check that relies on it (AuditChain.check). The input is read
// twice: as an anchor file's bytes, as they are; and, so that the fuzzer reaches valid
// slots, with the slots its first byte's low two bits name signed with the key (their
// counter, sequence and MAC as the input gives them), the rest of the input after the
// file being a trail. Reading may refuse, never crash; what it accepts must be a state
// the writer leaves or a crash can leave, and a trail judged intact must end within
// what the anchor allows after it. Compiled with the library's sources by `Fuzz/run` (make fuzz).

private let key = SecretBytes([UInt8](repeating: 7, count: 32))
private let appID = try! AppID("com.example.fuzz")
private let anchorFile = AuditAnchorFile(path: "fuzz", appID: appID)

@_cdecl("LLVMFuzzerTestOneInput")
public func anchorReaderFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    check(AuditAnchorFile.contents(of: bytes, appID: appID, key: key))
    guard let control = bytes.first else { return 0 }

    var file = Array(bytes.dropFirst().prefix(AuditAnchorFile.fileLength))
    var signed: [(counter: UInt64, slot: Int)] = []
    for slot in 0..<2 where control & (1 << slot) != 0 && file.count >= (slot + 1) * AuditAnchorFile.slotSize {
        let start = slot * AuditAnchorFile.slotSize
        let counter = integer(file[(start + 8)..<(start + 16)])
        let anchor = AuditAnchor(
            sequence: integer(file[(start + 16)..<(start + 24)]), mac: Array(file[(start + 24)..<(start + 56)]))
        file.replaceSubrange(
            start..<(start + AuditAnchorFile.slotSize), with: anchorFile.encode(anchor, counter: counter, key: key))
        if counter % 2 == UInt64(slot) { signed.append((counter, slot)) }
    }
    let contents = AuditAnchorFile.contents(of: file, appID: appID, key: key)
    check(contents)
    // Two slots signed in their places with consecutive counters: the newest wins, and a crash may have left one more entry.
    if signed.count == 2, signed[0].counter &+ 1 == signed[1].counter || signed[1].counter &+ 1 == signed[0].counter {
        guard case .anchor(let anchor, let counter) = contents, counter == max(signed[0].counter, signed[1].counter),
            anchor.following == 0...1
        else { preconditionFailure("two consecutive valid slots were not read as the newest of them") }
    }
    guard case .anchor(let anchor, _) = contents else { return 0 }
    let trail = Array(bytes.dropFirst(1 + AuditAnchorFile.fileLength))
    let (verdict, lines) = AuditChain(appID: appID, path: "fuzz", key: key, keyStore: .memory).check(
        trail, anchor: anchor)
    if case .intact(_, let last) = verdict, let first = lines.first?.entry {
        precondition(
            last >= anchor.sequence && anchor.following.contains(last - anchor.sequence),
            "intact past what the anchor allows")
        precondition(
            first.sequence <= anchor.sequence + 1 || first.event == .checkpoint, "intact without the anchored entry")
    }
    return 0
}

/// What any read may give: never `.absent` (that is the file's absence), and an anchor only
/// with what a writer or a crash leaves after it.
private func check(_ contents: AuditAnchorFile.Contents) {
    switch contents {
    case .absent: preconditionFailure("bytes read as no file")
    case .invalid: break
    case .anchor(let anchor, let counter):
        precondition(
            anchor.following == 0...1 || anchor.following == 1...1 || (anchor.following == 0...0 && counter == 0),
            "an anchor with an allowance no state leaves")
        precondition(anchor.mac.count == AuditEntry.macLength, "a MAC of the wrong length")
    }
}

private func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
}
