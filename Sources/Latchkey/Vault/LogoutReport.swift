/// What a logout or a wipe did.
public struct LogoutReport: Sendable, Equatable {
    /// The sessions deleted, by account and name.
    public var wipedSessions: [ItemKey] = []
    /// Whether the remembered username was erased.
    public internal(set) var forgotUsername = false
    /// How many sessions were left in place.
    public internal(set) var keptSessions = 0
    /// Whether a leftover encrypted file vault (from an earlier fallback) was wiped too.
    public internal(set) var wipedLeftoverFileVault = false

    /// A one-line, non-secret summary (names of sessions, never accounts or values).
    public var summary: String {
        let names = Set(wipedSessions.map(\.name)).sorted().joined(separator: ", ")
        var parts = ["wiped \(wipedSessions.count) session\(wipedSessions.count == 1 ? "" : "s")\(names.isEmpty ? "" : " (\(names))")"]
        parts.append(forgotUsername ? "forgot the username" : "kept the username")
        if keptSessions > 0 { parts.append("kept \(keptSessions) session\(keptSessions == 1 ? "" : "s")") }
        if wipedLeftoverFileVault { parts.append("destroyed the leftover file vault") }
        return parts.joined(separator: "; ")
    }
}
