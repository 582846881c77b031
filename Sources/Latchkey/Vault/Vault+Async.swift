import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The asynchronous forms of the vault's calls. Each runs the synchronous call
// on a dispatch queue, off the caller's thread and off Swift's cooperative
// pool, because D-Bus calls, fsync and key derivation block.

extension Vault {
    /// Opens a vault without blocking the caller; see the synchronous ``open(appID:policy:storeDirectory:backend:passphrase:unlock:)``.
    /// - Returns: The open vault.
    /// - Throws: As the synchronous initialiser.
    public static func open(
        appID: AppID, policy: Policy = .default, storeDirectory: String? = nil,
        backend: Policy.BackendChoice? = nil, passphrase: SecretBytes? = nil, unlock: Policy.SecretServiceUnlock? = nil
    ) async throws -> Vault {
        try await offload {
            try Vault.open(
                appID: appID, policy: policy, storeDirectory: storeDirectory, backend: backend, passphrase: passphrase,
                unlock: unlock)
        }
    }

    /// See the synchronous ``settleAudit()-6yyh3``.
    /// - Returns: What failed, by trail.
    public func settleAudit() async -> [AuditSyncFailure] {
        await withCheckedContinuation { continuation in
            Vault.queue.async { continuation.resume(returning: self.settleAudit()) }
        }
    }

    /// See the synchronous ``lastUsername()``.
    public func lastUsername() async throws -> String? {
        try await Vault.offload { try self.lastUsername() }
    }

    /// See the synchronous ``rememberUsername(_:)``.
    @discardableResult
    public func rememberUsername(_ username: String) async throws -> PolicyDecision {
        try await Vault.offload { try self.rememberUsername(username) }
    }

    /// See the synchronous ``forgetUsername()``.
    public func forgetUsername() async throws { try await Vault.offload { try self.forgetUsername() } }

    /// See the synchronous ``isUsernameMemoryAllowed()``.
    public func isUsernameMemoryAllowed() async throws -> Bool {
        try await Vault.offload { try self.isUsernameMemoryAllowed() }
    }

    /// See the synchronous ``setUsernameMemoryAllowed(_:)``.
    public func setUsernameMemoryAllowed(_ allowed: Bool) async throws {
        try await Vault.offload { try self.setUsernameMemoryAllowed(allowed) }
    }

    /// See the synchronous ``saveSession(_:name:account:expires:)``.
    @discardableResult
    public func saveSession(_ token: SecretBytes, name: String, account: String, expires: Date? = nil) async throws
        -> Date
    {
        try await Vault.offload { try self.saveSession(token, name: name, account: account, expires: expires) }
    }

    /// See the synchronous ``session(named:account:)``.
    public func session(named name: String, account: String) async throws -> Session? {
        try await Vault.offload { try self.session(named: name, account: account) }
    }

    /// See the synchronous ``sessions(account:)``.
    public func sessions(account: String? = nil) async throws -> [SessionInfo] {
        try await Vault.offload { try self.sessions(account: account) }
    }

    /// See the synchronous ``deleteSession(named:account:)``.
    @discardableResult
    public func deleteSession(named name: String, account: String) async throws -> Bool {
        try await Vault.offload { try self.deleteSession(named: name, account: account) }
    }

    /// See the synchronous ``logout(account:)``.
    @discardableResult
    public func logout(account: String? = nil) async throws -> LogoutReport {
        try await Vault.offload { try self.logout(account: account) }
    }

    /// See the synchronous ``wipe()``.
    @discardableResult
    public func wipe() async throws -> LogoutReport { try await Vault.offload { try self.wipe() } }

    /// See the synchronous ``applyExitPolicy()``.
    @discardableResult
    public func applyExitPolicy() async throws -> LogoutReport {
        try await Vault.offload { try self.applyExitPolicy() }
    }

    /// See the synchronous ``migrate()``.
    @discardableResult
    public func migrate() async throws -> MigrationReport { try await Vault.offload { try self.migrate() } }

    /// See the synchronous ``activeAccount()``.
    public func activeAccount() async throws -> String? { try await Vault.offload { try self.activeAccount() } }

    /// See the synchronous ``status()``.
    public func status() async throws -> VaultStatus { try await Vault.offload { try self.status() } }

    /// See the synchronous ``auditEntries(since:)``.
    public func auditEntries(since sequence: UInt64? = nil) async throws -> [AuditEntry] {
        try await Vault.offload { try self.auditEntries(since: sequence) }
    }

    /// See the synchronous ``verifyAudit()``.
    public func verifyAudit() async throws -> [AuditTrailVerification] {
        try await Vault.offload { try self.verifyAudit() }
    }

    /// See the synchronous ``auditResets()``.
    public func auditResets() async throws -> [AuditEntry] {
        try await Vault.offload { try self.auditResets() }
    }

    /// See the synchronous ``resetAuditTrail()``.
    public func resetAuditTrail() async throws -> [AuditResetReport] {
        try await Vault.offload { try self.resetAuditTrail() }
    }

    private static let queue = DispatchQueue(label: "io.github.latchkey.vault", attributes: .concurrent)

    /// Runs `body` on a new thread of its own, for work that may wait long (a refresh
    /// waiting for another's) and so must not hold one of Dispatch's few threads.
    static func onOwnThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try POSIX.startThread { continuation.resume(with: Result { try body() }) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    static func offload<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// See the synchronous ``saveSecret(_:named:expires:)``.
    @discardableResult
    public func saveSecret(_ value: SecretBytes, named name: String, expires: Date? = nil) async throws -> Date? {
        try await Vault.offload { try self.saveSecret(value, named: name, expires: expires) }
    }

    /// See the synchronous ``secret(named:)``.
    public func secret(named name: String) async throws -> NamedSecret? {
        try await Vault.offload { try self.secret(named: name) }
    }

    /// See the synchronous ``secrets()``.
    public func secrets() async throws -> [SecretInfo] {
        try await Vault.offload { try self.secrets() }
    }

    /// See the synchronous ``deleteSecret(named:)``.
    @discardableResult
    public func deleteSecret(named name: String) async throws -> Bool {
        try await Vault.offload { try self.deleteSecret(named: name) }
    }
}
