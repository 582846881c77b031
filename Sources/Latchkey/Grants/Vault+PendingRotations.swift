extension Vault {
    /// The namespace's pending rotations on disk (``PendingRotationVault``), or nil for a
    /// vault kept in memory, whose pending rotations live in ``pendingRotations`` alone.
    var pendingRotationVault: PendingRotationVault? {
        guard storeDirectory != nil else { return nil }
        return PendingRotationVault(appID: appID, directory: namespace.storeDirectory)
    }

    /// The endpoint's answer to an earlier refresh of `key` whose save failed, kept by this
    /// vault or on disk by any process, when the session still holds the refresh token that
    /// refresh spent; a moot one (the session is gone or holds another grant) is removed.
    /// Call it under the refresh lock.
    /// - Parameters:
    ///   - key: The session.
    ///   - current: The refresh token the session holds; nil when it holds none or is gone.
    /// - Returns: The answer to save instead of refreshing, or nil.
    /// - Throws: `LatchkeyError` when the pending rotations on disk cannot be read or written.
    func pendingAnswer(for key: ItemKey, holding current: SecretBytes?) throws -> Grant? {
        // An entry for a session that no longer holds the token it replaces is moot: it goes.
        let kept = pendingRotations.withLock { kept -> Grant? in
            guard let entry = kept[key], let current, entry.previousRefreshToken == current else {
                kept[key] = nil
                return nil
            }
            return entry.response
        }
        return try kept ?? pendingRotationVault?.answer(for: key, holding: current)
    }

    /// Keeps the answer to a refresh of `key` that spent `spent` and could not be saved: in
    /// this vault, and on disk for the next caller in any process.
    /// - Returns: Why it could not be kept on disk, or nil when it was (or the vault is kept in memory).
    func keepPendingRotation(_ answer: Grant, replacing spent: SecretBytes?, for key: ItemKey) -> LatchkeyError? {
        pendingRotations.withLock { $0[key] = PendingRotation(previousRefreshToken: spent, response: answer) }
        do {
            try pendingRotationVault?.keep(answer, replacing: spent, for: key)
            return nil
        } catch let error as LatchkeyError {
            return error
        } catch {
            return LatchkeyError(.internal, "\(error)")
        }
    }

    /// Forgets the pending rotations of the sessions `doomed` selects, once they are saved or
    /// the sessions are deleted (call it after the deletion, so a crash between the two never
    /// leaves a session without the answer its spent refresh token needs).
    /// - Parameters:
    ///   - removingEmptyVault: Whether the vault on disk goes too once no entry is left: only
    ///     when no entry that matters can be kept meanwhile, that is under the refresh lock
    ///     (every entry is kept under it), or once every session is gone (a wipe).
    ///   - doomed: Selects the sessions.
    /// - Throws: `LatchkeyError` when the pending rotations on disk cannot be written.
    func forgetPendingRotations(removingEmptyVault: Bool, where doomed: (ItemKey) -> Bool) throws {
        pendingRotations.withLock { kept in
            for key in kept.keys where doomed(key) { kept.removeValue(forKey: key) }
        }
        try pendingRotationVault?.drop(removingEmptyVault: removingEmptyVault, where: doomed)
    }
}
