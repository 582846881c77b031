#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which program provides the Secret Service on the process's session bus, and whether the
/// bus can start one (`latchkey status`, the agent's provider and enabling it: docs/SECRET-SERVICE-PROVIDER.md).
package struct SecretServiceProviderFound: Sendable, Equatable {
    /// The providers told apart by their executable's file name.
    package enum Kind: String, Sendable {
        /// Nobody owns `org.freedesktop.secrets`.
        case none
        /// `gnome-keyring-daemon`.
        case gnomeKeyring = "gnome-keyring"
        /// KWallet (`kwalletd5`, `kwalletd6`, `ksecretd`).
        case kwallet = "kwallet"
        /// `keepassxc`.
        case keepassxc = "keepassxc"
        /// Latchkey's own provider (`latchkey agent run --secret-service`).
        case latchkey = "latchkey"
        /// Any other program, or one whose executable cannot be read.
        case other = "other"
    }

    /// Who owns the name.
    package let kind: Kind
    /// The owner's process id; nil when nobody owns the name or the bus cannot tell it.
    package let processID: UInt32?
    /// The owner's executable (`/proc/PID/exe`); nil when nobody owns the name or it cannot be read.
    package let executable: String?
    /// Whether the bus lists `org.freedesktop.secrets` as activatable (`ListActivatableNames`).
    package let activatable: Bool

    /// The provider in plain words: `gnome-keyring`, `KWallet`, `KeePassXC`, `Latchkey's own
    /// provider`, `another program (PATH)`, or `none`.
    package var name: String {
        switch kind {
        case .none: "none"
        case .gnomeKeyring: "gnome-keyring"
        case .kwallet: "KWallet"
        case .keepassxc: "KeePassXC"
        case .latchkey: "Latchkey's own provider"
        case .other: "another program (\(executable ?? "its executable cannot be read"))"
        }
    }

    /// Asks the process's session bus who owns `org.freedesktop.secrets` (its pid, then
    /// `/proc/PID/exe`) and whether it is activatable; never starts a service, never prompts.
    /// - Parameter timeout: How long asking may take: what is left of the caller's deadline.
    /// - Returns: nil when there is no session bus.
    /// - Throws: `LatchkeyError` `.unavailable` when the bus cannot be reached, `.timedOut`.
    package static func onSessionBus(timeout: Duration) throws -> SecretServiceProviderFound? {
        var environment: [String: String] = [:]
        for name in SecretServiceAvailability.busVariables { environment[name] = POSIX.environmentValue(name) }
        guard SecretServiceAvailability.sessionBusAddress(in: environment) != nil else { return nil }
        let state = try LibSecret.nameState(of: SecretServiceAvailability.busName, timeout: timeout)
        guard let pid = state.ownerPID else {
            return SecretServiceProviderFound(
                kind: state.owned ? .other : .none, processID: nil, executable: nil, activatable: state.activatable)
        }
        let executable = executable(ofProcess: pid)
        return SecretServiceProviderFound(
            kind: executable.map(kind(ofExecutable:)) ?? .other, processID: pid, executable: executable,
            activatable: state.activatable)
    }

    /// The executable of the process `pid` (`/proc/PID/exe`); nil when it cannot be read (the
    /// process is gone, or is another user's).
    package static func executable(ofProcess pid: UInt32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
    }

    /// The provider an executable's path names, by its file name (a path ending in
    /// ` (deleted)`, an executable replaced since it started, is read without that suffix);
    /// Latchkey's own when it is this process's executable too.
    package static func kind(ofExecutable path: String) -> Kind {
        let live = path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
        let file = live.split(separator: "/").last.map(String.init) ?? live
        switch file {
        case "gnome-keyring-daemon": return .gnomeKeyring
        case "kwalletd5", "kwalletd6", "ksecretd": return .kwallet
        case "keepassxc": return .keepassxc
        case "latchkey": return .latchkey
        default:
            let own = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            return live == own ? .latchkey : .other
        }
    }

    /// Creates a finding (tests).
    package init(kind: Kind, processID: UInt32?, executable: String?, activatable: Bool) {
        self.kind = kind
        self.processID = processID
        self.executable = executable
        self.activatable = activatable
    }
}
