/// Where a setting's value came from, as `status` reports it.
package enum SettingSource: String {
    /// A global option on the command line.
    case flag
    /// An environment variable.
    case environment
    /// The policy file in force (for the policy itself: the user's `policy.json`).
    case policyFile = "policy file"
    /// What Latchkey ships with (for the backend: a built-in policy's `backend.kind`).
    case builtInDefault = "built-in default"
}

/// A setting's value and where it came from.
struct Setting {
    /// The value, as text.
    let value: String
    /// Where it came from.
    let source: SettingSource
    /// The flag, variable, file or built-in policy it came from, when there is one to name.
    let origin: String?

    /// `from flag --app`, `from built-in default`.
    var provenance: String { "from \(source.rawValue)" + (origin.map { " \($0)" } ?? "") }
}

/// Where `status` says each setting came from.
struct Settings {
    /// The app namespace.
    let app: Setting
    /// The policy (its name).
    let policy: Setting
    /// The backend choice (before any fallback).
    let backend: Setting
    /// The store directory.
    let storeDirectory: Setting

    /// The settings keyed as `status --json` shows them, in that order.
    var all: [(String, Setting)] {
        [("app", app), ("policy", policy), ("backend", backend), ("storeDirectory", storeDirectory)]
    }
}
