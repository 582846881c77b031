extension EncryptedFileBackend {
    /// Stores many items in one save, replacing items with the same keys: how
    /// the benchmark fills a vault with 10,000 entries without 10,000 saves.
    /// - Parameter items: The items and their addresses.
    /// - Throws: `LatchkeyError` as ``write(_:for:)``; on any error the vault is unchanged.
    package func benchmarkWrite(contentsOf items: [ItemKey: StoredItem]) throws {
        try write(contentsOf: items)
    }
}
