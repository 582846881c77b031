import Foundation

/// The app's diagnostics: one line each on standard error, never a secret
/// (no password, token or username is ever passed here).
enum Log {
    /// Writes `message` as one line to standard error.
    static func line(_ message: String) {
        FileHandle.standardError.write(Data("login-window: \(message)\n".utf8))
    }
}
