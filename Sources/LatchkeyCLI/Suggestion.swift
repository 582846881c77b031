/// The closest valid name to a mistyped one, for "did you mean `session`?".
enum Suggestion {
    /// The candidate closest to `word` by edit distance (insertions, deletions,
    /// substitutions and swaps of neighbours), or the one it is a prefix of; nil
    /// when none is close enough to be what was meant.
    /// - Parameters:
    ///   - word: What was typed, such as `sesion` or `--acount`.
    ///   - candidates: The valid names.
    /// - Returns: The closest candidate, or nil.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let prefixed = candidates.filter { $0.hasPrefix(word) }
        if word.count >= 2 && prefixed.count == 1 { return prefixed[0] }
        let typed = Array(bare(word))
        let scored = candidates.map { ($0, distance(typed, Array(bare($0)))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        let allowed = max(1, min(3, typed.count / 3))
        return best.1 <= allowed && best.1 < typed.count ? best.0 : nil
    }

    /// `; did you mean `x`?` for the closest candidate, or nothing.
    /// - Parameters:
    ///   - word: What was typed.
    ///   - candidates: The valid names.
    ///   - showing: How to write the suggestion (a subcommand with its group, say).
    /// - Returns: The clause to append to an error message, or an empty string.
    static func didYouMean(_ word: String, among candidates: [String], showing: (String) -> String = { $0 }) -> String {
        closest(to: word, among: candidates).map { "; did you mean `\(showing($0))`?" } ?? ""
    }

    /// The optimal-string-alignment distance between `a` and `b`.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    /// An option's name without its dashes, so `--acount` is compared as `acount`.
    private static func bare(_ word: String) -> Substring {
        word.drop { $0 == "-" }
    }
}
