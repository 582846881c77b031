/// What ``Vault/migrate()-8jolc`` moved from the encrypted file into the Secret Service.
public struct MigrationReport: Sendable, Equatable, Codable {
    /// Items copied and verified.
    public internal(set) var moved = 0
    /// Items not copied because the Secret Service already held a newer one.
    public internal(set) var keptNewer = 0
    /// Items not copied, and removed from the file vault, because they were deleted during
    /// the migration's window: by this namespace while the file vault could not be opened
    /// (a tombstone), or by another Secret Service client after the provider kept the copy.
    public internal(set) var droppedDeleted = 0
    /// Whether the file vault and its key were destroyed: only by a later open,
    /// in another process, once every item it copied reads back from the Secret Service.
    public internal(set) var destroyedFileVault = false
    /// Whether the file vault is kept until a later open, in another process and
    /// at least ``Vault/migrationMinimumAge`` seconds after the copy, reads every
    /// migrated item back (a provider may acknowledge an item it has not yet saved).
    public internal(set) var awaitingVerification = false

    /// A one-line summary.
    public var summary: String {
        var text = "moved \(moved) item\(moved == 1 ? "" : "s") from the encrypted file into the Secret Service"
        if keptNewer > 0 { text += ", kept \(keptNewer) newer one\(keptNewer == 1 ? "" : "s") already there" }
        if droppedDeleted > 0 {
            text += ", dropped \(droppedDeleted) deleted since the copy began"
        }
        if destroyedFileVault { text += ", destroyed the file vault and its key" }
        if awaitingVerification {
            text += "; the file vault is kept until a later open, at least 10 s from the copy, reads every item back"
        }
        return text
    }
}
