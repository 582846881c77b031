/// Where one app namespace keeps its files: a directory of its own,
/// `<store>/<appid>.d/` (0700), so no name of one namespace can ever be a name
/// of another, whatever the app ids (an app id ending like one of Latchkey's
/// own suffixes once made two namespaces share a lock file).
///
/// Inside it (`docs/FILE-FORMAT.md`): `credentials.vault|key|lock` (the
/// encrypted file vault), `audit-keys.vault|key|lock` (the key and anchor of the
/// file's audit trail), `tombstones.vault|key|lock` (the deletions made while a migration
/// awaits its verification), `pending.vault|key|lock` (rotated grants whose save failed after
/// the endpoint answered), `audit.<backend kind>.jsonl|lock|anchor` (one trail per kind
/// of backend; `anchor.making` while a trail is made), `fallback` while the namespace has
/// fallen back to the file, and `secret-service` from a change in the Secret Service until
/// a write lands in the file for want of it.
package struct NamespaceDirectory: Sendable {
    /// The store directory holding every namespace.
    package let storeDirectory: String
    /// This namespace's directory.
    package let path: String
    /// The app namespace.
    let appID: AppID

    /// The file stem of the app's encrypted vault.
    static let credentialsStem = "credentials"
    /// The file stem of the vault holding the file trail's key and anchor.
    static let auditKeysStem = "audit-keys"
    /// The file stem of the vault holding the deletions made during a migration's window.
    static let tombstonesStem = "tombstones"
    /// The file stem of the vault holding rotated grants whose save failed after the endpoint answered.
    static let pendingRotationsStem = "pending"

    /// The directory of `appID` in `storeDirectory` (a trailing slash is ignored).
    package init(appID: AppID, storeDirectory: String) {
        let trimmed =
            storeDirectory.count > 1 && storeDirectory.hasSuffix("/")
            ? String(storeDirectory.dropLast()) : storeDirectory
        self.appID = appID
        self.storeDirectory = trimmed
        path = trimmed + "/" + appID.rawValue + ".d"
    }

    /// The path of a file in this namespace's directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// The path of the trail of a kind of backend.
    func trailPath(_ kind: BackendKind) -> String { file("audit.\(kind.rawValue).jsonl") }

    /// The path of the lock file of the trail of a kind of backend.
    func trailLockPath(_ kind: BackendKind) -> String { file("audit.\(kind.rawValue).lock") }

    /// The path of the anchor file of the trail of a kind of backend.
    func trailAnchorPath(_ kind: BackendKind) -> String { file("audit.\(kind.rawValue).anchor") }

    /// Checks the store directory and this directory (each private, owned by
    /// this user, not a symbolic link).
    /// - Returns: false when either does not exist yet.
    /// - Throws: `.insecurePermissions` or `.invalidInput` naming the directory.
    func requirePrivate() throws -> Bool {
        try PrivateFiles.requirePrivate(storeDirectory, directory: true) != nil
            && PrivateFiles.requirePrivate(path, directory: true) != nil
    }

    /// Creates the store directory and this directory (0700) when missing, and checks both.
    func prepare() throws {
        try PrivateFiles.prepareDirectory(storeDirectory)
        try PrivateFiles.prepareDirectory(path)
    }
}
