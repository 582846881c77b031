import LatchkeyTestSupport
import Synchronization
import Testing

@testable import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The stores every Vault test runs against: the real Secret Service, the
/// encrypted file with a key file, and the encrypted file with a passphrase.
enum TestedStore: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case secretService, keyFile, passphrase
    var testDescription: String { rawValue }

    /// Opens a vault of a fresh namespace on this store, reading the time from `clock`.
    func open(policy: Policy = .default, clock: WallClock = .system, purpose: String = #function) throws -> Vault {
        let appID = try SecretServiceTestSupport.freshAppID(purpose.filter { $0.isLetter })
        return try open(appID: appID, directory: try freshDirectory(purpose) + "/store", policy: policy, clock: clock)
    }

    /// Opens the same namespace again, as another process would: nothing read or cached.
    func reopen(_ vault: Vault, policy: Policy = .default) throws -> Vault {
        try open(appID: vault.appID, directory: vault.storeDirectory!, policy: policy, clock: vault.clock)
    }

    private func open(appID: AppID, directory: String, policy: Policy, clock: WallClock) throws -> Vault {
        switch self {
        case .secretService:
            try SecretServiceGate.require()
            return try Vault.open(
                appID: appID, policy: policy, storeDirectory: directory, backend: .secretService, passphrase: nil,
                clock: clock, secretService: { SecretServiceBackend(appID: appID) })
        case .keyFile:
            return try Vault.open(
                appID: appID, policy: policy, storeDirectory: directory, backend: .file, passphrase: nil, clock: clock,
                secretService: { SecretServiceBackend(appID: appID) })
        case .passphrase:
            let backend = EncryptedFileBackend(appID: appID, directory: directory, keySource: fastPassphrase())
            return try Vault(appID: appID, policy: policy, storeDirectory: directory, store: backend, clock: clock)
        }
    }
}

/// A clock a test moves by hand: a vault made with ``wallClock`` reads its time.
final class HandClock: Sendable {
    private let time: Mutex<Date>

    /// A clock that starts at `start`.
    init(_ start: Date = Date()) { time = Mutex(start) }

    /// The time now.
    var now: Date { time.withLock { $0 } }

    /// Moves the clock on by `interval` seconds.
    func advance(by interval: TimeInterval) { time.withLock { $0 += interval } }

    /// This clock, as a vault reads it.
    var wallClock: WallClock { WallClock { self.now } }
}

extension Vault {
    /// The items of `kinds` the store holds, read through the backend, not the Vault.
    func storedKeys(_ kinds: [ItemKey.Kind] = [.username, .session]) throws -> [ItemKey] {
        try kinds.flatMap { try backend.list(kind: $0) }
    }

    /// An environment with no session bus, for opening a vault where no Secret Service runs.
    static let noBus = ["XDG_RUNTIME_DIR": "/nonexistent-latchkey-test"]

    /// Opens a vault as if no Secret Service were running (the availability
    /// check finds no session bus).
    static func withoutSecretService(
        appID: AppID, policy: Policy, storeDirectory: String, backend: Policy.BackendChoice? = nil
    ) throws -> Vault {
        try Vault.open(
            appID: appID, policy: policy, storeDirectory: storeDirectory, backend: backend, passphrase: nil,
            secretService: { SecretServiceBackend(appID: appID, deadline: .seconds(1), environment: noBus) })
    }

    /// A namespace of its own for a migration test: a fresh app id (``SecretServiceTestSupport/freshAppID(_:)``),
    /// a store directory, and the vault opened there while no Secret Service runs, so on the file.
    /// - Parameter purpose: What the app id is for, as `freshAppID` takes it.
    static func offlineNamespace(_ purpose: String, label: String = #function) throws -> (
        appID: AppID, directory: String, vault: Vault
    ) {
        let appID = try SecretServiceTestSupport.freshAppID(purpose)
        let directory = try freshDirectory(label) + "/store"
        return (appID, directory, try withoutSecretService(appID: appID, policy: .default, storeDirectory: directory))
    }
}
