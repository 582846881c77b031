/// Durations as `--expires-in` takes them: plain seconds (`3600`), or whole
/// numbers with the units `d`, `h`, `m` and `s`, in that order and each at most
/// once (`90s`, `30m`, `12h`, `7d`, `1h30m`).
enum Lifetime {
    /// The units, largest first, with their length in seconds.
    private static let units: [(Character, Int64)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

    /// The number of seconds `text` states.
    /// - Parameter text: Such as `3600`, `90s` or `1h30m`.
    /// - Returns: The seconds, or nil when `text` is not a duration (or overflows).
    static func seconds(_ text: String) -> Int64? {
        guard !text.isEmpty else { return nil }
        var total: Int64 = 0
        var digits = ""
        var lastUnit = -1
        for character in text {
            if character.isASCII && character.isNumber {
                digits.append(character)
                continue
            }
            guard let unit = units.firstIndex(where: { $0.0 == character }), unit > lastUnit, let number = Int64(digits)
            else { return nil }
            let (product, overflowed) = number.multipliedReportingOverflow(by: units[unit].1)
            let (sum, overflowedAgain) = total.addingReportingOverflow(product)
            guard !overflowed && !overflowedAgain else { return nil }
            (total, digits, lastUnit) = (sum, "", unit)
        }
        guard !digits.isEmpty else { return lastUnit >= 0 ? total : nil }
        // Plain seconds: digits alone, with no unit before them.
        guard lastUnit < 0 else { return nil }
        return Int64(digits)
    }
}
