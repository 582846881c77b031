import Latchkey

extension Vault {
    /// Makes a vault kept wholly in memory, for an app's tests: the real policy
    /// decides and the real audit chain records, but the audit trail, its key and
    /// every item live in memory, so the vault needs no store directory, writes no
    /// file and works from any working directory, a read-only one included. Its
    /// `storeDirectory` is nil; `verifyAudit()` checks its trail as it checks a trail file.
    ///
    /// A failure injected into `store` (``InMemoryBackend/fail(_:kind:account:name:with:)``)
    /// surfaces as that store's error, never as an audit-trail error, since the
    /// trail keeps its key outside the store.
    ///
    /// Vaults made on one `store` stand for processes of the app sharing one store:
    /// they share its items and its refresh and commit locks, so their token refreshes
    /// are single-flight across them as across processes (each keeps its own audit
    /// trail in memory). See <doc:TestingAnAppAgainstLatchkey>.
    /// - Parameters:
    ///   - appID: The app namespace.
    ///   - policy: The policy.
    ///   - store: The store; a new empty one by default.
    ///   - clock: The vault's time; the system's clock when nil.
    /// - Returns: The vault.
    public static func makeInMemory(
        appID: AppID, policy: Policy = .default, store: InMemoryBackend = InMemoryBackend(), clock: TestClock? = nil
    ) -> Vault {
        Vault(
            appID: appID, policy: policy, inMemory: store, locks: store.vaultLocks,
            clock: clock.map { clock in WallClock { clock.now } } ?? .system)
    }
}
