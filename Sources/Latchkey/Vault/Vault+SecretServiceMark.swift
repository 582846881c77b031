extension Vault {
    /// The file that marks a namespace whose credentials are kept in the Secret Service:
    /// created before a change lands there (``markKeptInSecretService()``), removed when a
    /// write lands in the encrypted file instead for want of one (``claimMoveFromSecretService()``).
    var secretServiceMarkPath: String { namespace.file("secret-service") }

    /// Marks the namespace as kept in the Secret Service; called before a change lands
    /// there, and writes only when the mark is missing.
    /// - Throws: `LatchkeyError` when the mark cannot be written; the change is then not made.
    func markKeptInSecretService() throws {
        guard storeDirectory != nil, try POSIX.status(of: secretServiceMarkPath) == nil else { return }
        try namespace.prepare()
        try PrivateFiles.replace(secretServiceMarkPath, with: Array("secret-service\n".utf8))
    }

    /// After a write that landed in the encrypted file because the Secret Service could not
    /// be used (``OpenReport/secretServiceUnavailable``): whether that moved the namespace's
    /// credentials from the Secret Service, where a change last landed, to the weaker store.
    /// The mark goes with the answer, so a move is reported once: the writes after it, until
    /// a change lands in the Secret Service again, are not moves.
    /// - Returns: true when the namespace was kept in the Secret Service until this write.
    /// - Throws: `LatchkeyError` when the mark cannot be removed.
    package func claimMoveFromSecretService() throws -> Bool {
        beginOperation()
        guard secretServiceUnavailable != nil, storeDirectory != nil,
            try POSIX.status(of: secretServiceMarkPath) != nil
        else { return false }
        try PrivateFiles.remove(secretServiceMarkPath)
        return true
    }
}
