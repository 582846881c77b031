/// What ``Vault/migrate()-8jolc`` moved from the encrypted file into the Secret Service.
public struct MigrationReport: Sendable, Equatable, Codable {
    /// Items copied and verified.
    public internal(set) var moved = 0
    /// Items not copied because the Secret Service already held a newer one.
    public internal(set) var keptNewer = 0
    /// Whether the file vault and its key were destroyed afterwards.
    public internal(set) var destroyedFileVault = false

    /// A one-line summary.
    public var summary: String {
        var text = "moved \(moved) item\(moved == 1 ? "" : "s") from the encrypted file into the Secret Service"
        if keptNewer > 0 { text += ", kept \(keptNewer) newer one\(keptNewer == 1 ? "" : "s") already there" }
        if destroyedFileVault { text += ", destroyed the file vault and its key" }
        return text
    }
}
