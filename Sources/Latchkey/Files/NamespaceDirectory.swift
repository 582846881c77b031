import Synchronization

/// Where one app namespace keeps its files: a directory of its own,
/// `<store>/<appid>.d/` (0700), so no name of one namespace can ever be a name
/// of another, whatever the app ids (an app id ending like one of Latchkey's
/// own suffixes once made two namespaces share a lock file).
///
/// Inside it (`docs/FILE-FORMAT.md`): `credentials.vault|key|lock` (the
/// encrypted file vault), `audit-keys.vault|key|lock` (the key and anchor of the
/// file's audit trail) and `audit.<backend kind>.jsonl|lock|anchor` (one trail per kind
/// of backend), and `fallback` while the namespace has fallen back to the
/// file. The `.d` suffix keeps the directory apart from every file name
/// of the earlier, flat layout, none of which ends in `.d`.
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

    // MARK: The earlier, flat layout

    /// Namespaces whose earlier layout this process has already looked for.
    private static let upgraded = Mutex<Set<String>>([])

    /// Each file of the flat layout (`<store>/<appid>.vault` and so on) and where it goes.
    /// Lock files are not moved: they hold nothing, and in the flat layout
    /// `<appid>.lock` could also be the trail lock of another namespace.
    private var legacyMoves: [(old: String, new: String)] {
        let old = storeDirectory + "/" + appID.rawValue
        return [
            (old + ".vault", file(Self.credentialsStem + ".vault")),
            (old + ".key", file(Self.credentialsStem + ".key")),
            (old + "+audit.vault", file(Self.auditKeysStem + ".vault")),
            (old + "+audit.key", file(Self.auditKeysStem + ".key")),
            (old + ".file.audit.jsonl", trailPath(.file)),
            (old + ".file.audit.anchor", trailAnchorPath(.file)),
            (old + ".secret-service.audit.jsonl", trailPath(.secretService)),
            (old + ".secret-service.audit.anchor", trailAnchorPath(.secretService)),
            (old + ".fallback", file("fallback")),
        ]
    }

    /// Moves this namespace's files from the flat layout of earlier versions into
    /// its directory, once per process, before anything reads or writes them.
    ///
    /// Under `layout.lock` in the new directory, each file is given its new name
    /// with `link` and its old one removed, then both directories are synced; a
    /// crash part-way leaves every file under one of its names, and the next run
    /// finishes the move. The trails keep verifying (their MACs bind the app id,
    /// not the path).
    /// - Throws: `.invalidInput` naming both paths when a file exists under its
    ///   old and its new name (nothing is overwritten); file-system errors.
    package func upgradeLegacyLayout() throws {
        if Self.upgraded.withLock({ $0.contains(path) }) { return }
        if try POSIX.status(of: storeDirectory) != nil,
            try legacyMoves.contains(where: { try POSIX.status(of: $0.old) != nil })
        {
            try PrivateFiles.requirePrivate(storeDirectory, directory: true)
            try prepare()
            try PrivateFiles.withExclusiveLock(file("layout.lock")) {
                for (old, new) in legacyMoves {
                    guard try PrivateFiles.requirePrivate(old, directory: false) != nil else { continue }
                    guard try POSIX.link(old, to: new) else {
                        throw LatchkeyError(
                            .invalidInput,
                            "\(old) is left from an earlier Latchkey, and \(new) exists too; move one of them away")
                    }
                    try POSIX.removeFile(old)
                }
                try POSIX.syncDirectory(path)
                try POSIX.syncDirectory(storeDirectory)
            }
        }
        Self.upgraded.withLock { _ = $0.insert(path) }
    }
}
