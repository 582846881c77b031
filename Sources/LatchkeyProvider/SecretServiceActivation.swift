import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Enabling the provider on a headless host (`latchkey agent enable-secret-service`,
/// docs/SECRET-SERVICE-PROVIDER.md): a systemd user unit with `BusName=org.freedesktop.secrets`
/// and a D-Bus activation file in the user's data directory, both running this `latchkey` with
/// `agent run --secret-service`, and both marked as Latchkey's on their first line, so that
/// disabling removes only Latchkey's own files and the agent knows its own activation file.
package enum SecretServiceActivation {
    /// The systemd user unit's file name.
    package static let unitName = "latchkey-secret-service.service"
    /// The first line of both files: what marks them as Latchkey's.
    static let marker = "# Latchkey's Secret Service provider: written by `latchkey agent enable-secret-service`"

    /// Where the two files go.
    package struct Paths: Sendable, Equatable {
        /// `$XDG_CONFIG_HOME/systemd/user/latchkey-secret-service.service` (else under `$HOME/.config`).
        package let unit: String
        /// `$XDG_DATA_HOME/dbus-1/services/org.freedesktop.secrets.service` (else under `$HOME/.local/share`).
        package let activation: String
        /// The lock held while the two files are checked and written or removed, beside the unit
        /// (a dot file, which systemd does not read as a unit).
        package var lock: String {
            PrivateFiles.directoryName(of: unit) + "/.latchkey-secret-service.lock"
        }

        /// The paths the process's environment (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `HOME`) gives.
        /// - Throws: `LatchkeyError` `.invalidInput` when neither an absolute XDG variable nor an absolute `HOME` is set.
        package init() throws {
            let environment = try StoreDirectory.processEnvironment(["XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"])
            func base(_ variable: String, _ fallback: String) throws -> String {
                if let value = environment[variable], value.hasPrefix("/") { return value }
                guard let home = environment["HOME"], home.hasPrefix("/") else {
                    throw LatchkeyError(
                        .invalidInput,
                        "neither \(variable) nor HOME is an absolute path, so there is no place for the file")
                }
                return home + "/" + fallback
            }
            unit = try base("XDG_CONFIG_HOME", ".config") + "/systemd/user/" + SecretServiceActivation.unitName
            activation =
                try base("XDG_DATA_HOME", ".local/share") + "/dbus-1/services/" + SecretServiceProvider.busName
                + ".service"
        }
    }

    /// Whether the file at `path` is one Latchkey wrote (its first line is the marker).
    static func isLatchkeys(_ path: String) -> Bool {
        guard let contents = FileManager.default.contents(atPath: path) else { return false }
        return contents.starts(with: Array((marker + "\n").utf8))
    }

    /// Whether the user's activation file for `org.freedesktop.secrets` is Latchkey's: the bus
    /// then starts Latchkey (the user's data directory comes before the system's among the
    /// session bus's service directories), so an agent serves the name it may be activated for.
    package static func isLatchkeysOwn() -> Bool {
        guard let paths = try? Paths() else { return false }
        return isLatchkeys(paths.activation)
    }

    /// The unit's text.
    static func unit(_ command: String) -> String {
        """
        \(marker)
        # `latchkey agent disable-secret-service` removes it. The bus starts it (no [Install] section).
        [Unit]
        Description=Latchkey's Secret Service provider (org.freedesktop.secrets)
        Documentation=man:latchkey(1)

        [Service]
        Type=dbus
        BusName=\(SecretServiceProvider.busName)
        ExecStart=\(command)

        """
    }

    /// The activation file's text: `SystemdService=` for a bus that starts services through
    /// systemd, `Exec=` for one that does not.
    static func activation(_ command: String) -> String {
        """
        \(marker)
        # `latchkey agent disable-secret-service` removes it.
        [D-BUS Service]
        Name=\(SecretServiceProvider.busName)
        Exec=\(command)
        SystemdService=\(unitName)

        """
    }

    /// Why enabling is refused with what is on the bus and in the user's files, or nil when it may go ahead.
    /// - Parameters:
    ///   - found: What the session bus says (nil when there is no session bus).
    ///   - paths: Where the files go.
    static func refusal(_ found: SecretServiceProviderFound?, _ paths: Paths) -> String? {
        if let found, found.kind != .none, found.kind != .latchkey {
            return "\(found.name) provides the Secret Service on the session bus; Latchkey never takes it over"
        }
        let ownActivation = isLatchkeys(paths.activation)
        if FileManager.default.fileExists(atPath: paths.activation) && !ownActivation {
            return "\(paths.activation) is another provider's activation file; Latchkey never replaces it"
        }
        if let found, found.activatable, !ownActivation {
            return "the session bus can activate another provider of \(SecretServiceProvider.busName); "
                + "Latchkey never takes it over"
        }
        if FileManager.default.fileExists(atPath: paths.unit) && !isLatchkeys(paths.unit) {
            return "\(paths.unit) exists and is not Latchkey's; Latchkey never replaces it"
        }
        return nil
    }

    /// Writes the unit and the activation file (each atomically and durably, under a lock), running
    /// `executable agent run --secret-service`, unless another provider is there.
    /// - Parameters:
    ///   - executable: The absolute path of this `latchkey`.
    ///   - timeout: How long asking the session bus may take.
    /// - Returns: The paths written, and what the session bus said (nil when there is none).
    /// - Throws: `LatchkeyError` `.cannotCreate` (nothing written) naming another provider (owning the name, activatable,
    ///   or its activation file or a unit of the same name in the way); `.invalidInput` for an
    ///   executable path a unit cannot hold plainly; `.timedOut`, `.unavailable` from the bus; `.io`.
    package static func enable(executable: String, timeout: Duration) throws -> (
        Paths, SecretServiceProviderFound?
    ) {
        let plain = executable.unicodeScalars.allSatisfy {
            $0.isASCII
                && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/._+-".unicodeScalars.contains($0))
        }
        guard executable.hasPrefix("/"), plain else {
            throw LatchkeyError(
                .invalidInput,
                "the path of latchkey (\(executable)) holds characters a systemd unit's ExecStart= and an activation "
                    + "file's Exec= cannot hold plainly; install latchkey under a plain path")
        }
        let paths = try Paths()
        let found = try SecretServiceProviderFound.onSessionBus(timeout: timeout)
        let command = executable + " agent run --secret-service"
        func refuseIfAnotherIsThere() throws {
            if let reason = refusal(found, paths) {
                throw LatchkeyError(.cannotCreate, "not enabling Latchkey's Secret Service provider: " + reason)
            }
        }
        // Checked before anything is created, and again under the lock.
        try refuseIfAnotherIsThere()
        for path in [paths.unit, paths.activation] {
            try FileManager.default.createDirectory(
                atPath: PrivateFiles.directoryName(of: path), withIntermediateDirectories: true)
        }
        try PrivateFiles.withExclusiveLock(paths.lock) {
            try refuseIfAnotherIsThere()
            for (path, text) in [(paths.unit, unit(command)), (paths.activation, activation(command))] {
                try PrivateFiles.replace(path, with: Array(text.utf8))
            }
        }
        return (paths, found)
    }

    /// Removes the unit and the activation file where they are Latchkey's (durably, under the
    /// lock enabling holds); leaves any other.
    /// - Returns: The paths removed.
    /// - Throws: `LatchkeyError` `.io` when one cannot be removed.
    package static func disable() throws -> [String] {
        let paths = try Paths()
        try FileManager.default.createDirectory(
            atPath: PrivateFiles.directoryName(of: paths.lock), withIntermediateDirectories: true)
        return try PrivateFiles.withExclusiveLock(paths.lock) {
            var removed: [String] = []
            for path in [paths.activation, paths.unit] where isLatchkeys(path) {
                try PrivateFiles.remove(path)
                removed.append(path)
            }
            return removed
        }
    }
}
