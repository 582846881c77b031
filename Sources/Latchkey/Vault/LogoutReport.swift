/// What a logout or a wipe did.
public struct LogoutReport: Sendable, Equatable, Codable {
    /// The sessions deleted, ordered by account and then by name, the same on every store.
    public internal(set) var wipedSessions: [ItemKey] = [] {
        didSet { wipedSessions.sort { ($0.account, $0.name) < ($1.account, $1.name) } }
    }
    /// The named secrets deleted, ordered by name.
    public internal(set) var wipedSecrets: [ItemKey] = [] {
        didSet { wipedSecrets.sort { $0.name < $1.name } }
    }
    /// How many named secrets were left in place (the policy's `secrets.onLogout` is `keep`).
    public internal(set) var keptSecrets = 0
    /// Whether the remembered username was erased.
    public internal(set) var forgotUsername = false
    /// Whether a remembered username was there and stays (the policy keeps it on logout).
    public internal(set) var keptUsername = false
    /// How many sessions were left in place.
    public internal(set) var keptSessions = 0
    /// How many damaged items (the Secret Service provider lost their payload, so
    /// they have no name Latchkey can read back) were deleted.
    public internal(set) var removedDamagedItems = 0
    /// Whether a leftover encrypted file vault (from an earlier fallback) was wiped too.
    public internal(set) var wipedLeftoverFileVault = false

    /// A one-line, non-secret summary (names of sessions and secrets, never accounts or values).
    public var summary: String {
        let names = Set(wipedSessions.map(\.name)).sorted().joined(separator: ", ")
        var parts = [
            "wiped \(wipedSessions.count) session\(wipedSessions.count == 1 ? "" : "s")\(names.isEmpty ? "" : " (\(names))")"
        ]
        parts.append(
            forgotUsername ? "forgot the username" : keptUsername ? "kept the username" : "no username was remembered")
        if !wipedSecrets.isEmpty {
            let names = wipedSecrets.map(\.name).joined(separator: ", ")
            parts.append("wiped \(wipedSecrets.count) secret\(wipedSecrets.count == 1 ? "" : "s") (\(names))")
        }
        if keptSecrets > 0 { parts.append("kept \(keptSecrets) secret\(keptSecrets == 1 ? "" : "s")") }
        if keptSessions > 0 { parts.append("kept \(keptSessions) session\(keptSessions == 1 ? "" : "s")") }
        if removedDamagedItems > 0 {
            parts.append("removed \(removedDamagedItems) damaged item\(removedDamagedItems == 1 ? "" : "s")")
        }
        if wipedLeftoverFileVault { parts.append("destroyed the leftover file vault") }
        return parts.joined(separator: "; ")
    }
}
