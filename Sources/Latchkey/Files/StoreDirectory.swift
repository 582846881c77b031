/// Where a namespace's files live when the app does not say: the XDG base
/// directory rule, applied strictly, so the same command finds the same store
/// whatever the current directory.
///
/// A relative `XDG_DATA_HOME` is invalid by the XDG specification and ignored;
/// a relative or missing `HOME` leaves no default at all; an explicit store
/// directory must be absolute (a leading `~` is named as such: no shell expanded it).
package enum StoreDirectory {
    /// `$XDG_DATA_HOME/latchkey` when that is absolute, else `$HOME/.local/share/latchkey`.
    /// - Parameter environment: The environment to read.
    /// - Returns: The directory's path.
    /// - Throws: `LatchkeyError` `.invalidInput` saying what is wrong with `HOME`
    ///   (not set, or not an absolute path) when `XDG_DATA_HOME` gives no answer.
    package static func standard(environment: [String: String]) throws -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/latchkey" }
        return try home(environment, instead: "XDG_DATA_HOME", purpose: "default store directory")
            + "/.local/share/latchkey"
    }

    /// The process's variables `names`; by default `XDG_DATA_HOME` and `HOME`, the
    /// variables ``standard(environment:)`` reads.
    /// - Throws: `LatchkeyError` `.invalidInput` naming one whose bytes are not valid UTF-8.
    package static func processEnvironment(_ names: [String] = ["XDG_DATA_HOME", "HOME"]) throws -> [String: String] {
        var environment: [String: String] = [:]
        for name in names {
            guard POSIX.environmentValueIsUTF8(name) else {
                throw LatchkeyError(
                    .invalidInput, "the environment variable \(name) is not valid UTF-8, so it cannot be used"
                )
            }
            environment[name] = POSIX.environmentValue(name)
        }
        return environment
    }

    /// `$HOME` when it is absolute.
    /// - Parameters:
    ///   - environment: The environment to read.
    ///   - variable: The XDG variable that, had it been absolute, would have been used instead.
    ///   - purpose: What needs it, for the message (`default store directory`).
    /// - Throws: `LatchkeyError` `.invalidInput` when it is not set or is relative.
    package static func home(_ environment: [String: String], instead variable: String, purpose: String) throws
        -> String
    {
        guard let home = environment["HOME"], !home.isEmpty else {
            throw LatchkeyError(
                .invalidInput, "HOME is not set and \(variable) is not an absolute path, so there is no \(purpose)")
        }
        guard home.hasPrefix("/") else {
            throw LatchkeyError(
                .invalidInput,
                "HOME ('\(home)') is not an absolute path, so there is no \(purpose); set HOME to an absolute path")
        }
        return home
    }

    /// Checks that a store directory given explicitly is absolute.
    /// - Parameters:
    ///   - path: The directory.
    ///   - origin: Where it came from, for the message (`--store-dir`, `LATCHKEY_HOME`).
    /// - Returns: `path`.
    /// - Throws: `LatchkeyError` `.invalidInput` naming `origin` when it is relative
    ///   or starts with a `~` no shell expanded.
    package static func requireAbsolute(_ path: String, origin: String) throws -> String {
        if path.hasPrefix("~") {
            throw LatchkeyError(
                .invalidInput,
                "\(origin) '\(path)' starts with '~', which only a shell expands (and did not here); give an absolute path"
            )
        }
        guard path.hasPrefix("/") else {
            throw LatchkeyError(
                .invalidInput,
                "\(origin) '\(path)' is not an absolute path; a relative one would name a different store in each directory"
            )
        }
        return path
    }
}
