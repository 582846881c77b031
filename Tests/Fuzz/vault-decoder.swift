// libFuzzer target for the vault decoders: the header and whole-file path
// (VaultHeader.decode, then VaultFormat.open with keys from an all-zero key
// file) and the entry-table decoder (VaultTable.decode) on the same input.
// Decoding may fail, never crash; a table that decodes must re-encode to the
// same items, and each item looked up alone (VaultEntries) must be the decoded one. Compiled with the library's sources by `Fuzz/run` (make fuzz).

private let zeroKey = SecretBytes([UInt8](repeating: 0, count: 32))

@_cdecl("LLVMFuzzerTestOneInput")
public func vaultDecoderFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []

    // Errors are the expected outcome for almost every input; only crashes count.
    if let header = try? VaultHeader.decode(bytes, path: "fuzz") {
        _ = try? VaultFormat.open(
            bytes, header: header, keys: VaultKeys(master: zeroKey, salt: header.salt), path: "fuzz")
    }

    if let items = try? VaultTable.decode(SecretBytes(bytes), path: "fuzz") {
        guard let again = try? VaultTable.decode(VaultTable.encode(items), path: "fuzz"), again == items else {
            preconditionFailure("a decoded table did not survive re-encoding")
        }
        // The entry-by-entry lookups the backend uses find what the full decode finds.
        if let entries = try? VaultEntries(table: SecretBytes(bytes), path: "fuzz") {
            for (key, item) in items where entries.item(for: key) != item {
                preconditionFailure("an entry looked up alone differs from the full decode")
            }
        } else {
            preconditionFailure("a table that decodes whole did not open entry by entry")
        }
    }
    return 0
}
