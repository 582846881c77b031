import Foundation
import Testing

/// Whether this run may use the Secret Service: only the throw-away gnome-keyring of
/// `.ci/with-keyring` (which `make test` runs every pass in), never a developer's own
/// keyring, and never a missing one. Decided once, from the variables `.ci/with-keyring`
/// sets, so a plain `swift test` skips what needs it instead of failing.
public enum SecretServiceGate {
    /// Whether the private keyring of `.ci/with-keyring` is there.
    public static let isAvailable: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return environment["LATCHKEY_TEST_KEYRING_PASSWORD_FILE"] != nil && environment["LATCHKEY_TEST_SANDBOX"] != nil
            && environment["DBUS_SESSION_BUS_ADDRESS"] != nil
    }()

    /// Why a test that needs the Secret Service is skipped, and how to run it.
    public static let skipReason: Comment =
        "needs the private Secret Service of .ci/with-keyring: run `make test` (or `.ci/with-keyring swift test`)"

    /// Skips the running test case (``Testing/Test/cancel(_:sourceLocation:)``) unless the Secret Service is there.
    public static func require(sourceLocation: SourceLocation = #_sourceLocation) throws {
        if !isAvailable { try Test.cancel(skipReason, sourceLocation: sourceLocation) }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test or suite only with the private Secret Service of `.ci/with-keyring`
    /// (``SecretServiceGate``); otherwise it is skipped, saying to run `make test`.
    public static var needsSecretService: Self {
        .enabled(if: SecretServiceGate.isAvailable, SecretServiceGate.skipReason)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the suite only in `make test`'s passes that may lock, stop or kill the
    /// keyring, each alone on a fresh bus and daemon (`LATCHKEY_DESTRUCTIVE_KEYRING_TESTS=1`):
    /// beside other tests it would break them.
    public static var destroysKeyring: Self {
        .enabled(
            if: ProcessInfo.processInfo.environment["LATCHKEY_DESTRUCTIVE_KEYRING_TESTS"] == "1",
            "locks, stops or kills the keyring, so alone on a keyring of its own: run `make test` (its passes with LATCHKEY_DESTRUCTIVE_KEYRING_TESTS=1)"
        )
    }
}
