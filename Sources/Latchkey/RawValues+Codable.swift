// The identifiers apps keep and send elsewhere are encoded as their stable names,
// a single string each (RawRepresentable's Codable forms).

extension AuditEvent: Codable {}
extension BackendKind: Codable {}
extension ItemKey.Kind: Codable {}
extension LatchkeyError.Code: Codable {}
