extension ItemKey {
    /// The longest account and the longest item name an app may use: 255 UTF-8
    /// bytes each, counted in Unicode NFC (as stored). Far above any real
    /// session name or username, and low enough that an audit detail naming an
    /// item is never cut short by one name alone.
    package static let maximumNameLength = 255

    /// Checks the account's and the name's lengths against ``maximumNameLength``.
    /// - Throws: `LatchkeyError` `.invalidInput` saying which is too long and by
    ///   how much (never quoting the account, which may be personal data).
    package func requireNameLengths() throws {
        let limit = Self.maximumNameLength
        if name.utf8.count > limit {
            throw LatchkeyError(
                .invalidInput, "the \(kind) name is \(name.utf8.count) bytes long; the most is \(limit) (UTF-8)")
        }
        if account.utf8.count > limit {
            throw LatchkeyError(
                .invalidInput, "the account is \(account.utf8.count) bytes long; the most is \(limit) (UTF-8)")
        }
    }
}
