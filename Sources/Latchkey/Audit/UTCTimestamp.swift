/// UTC times as ISO 8601 text with milliseconds, `2025-06-01T12:34:56.789Z`,
/// computed without a calendar so the text is the same on every system.
enum UTCTimestamp {
    /// The text for `milliseconds` since 1970-01-01T00:00:00Z (years 1970 to 9999).
    static func format(milliseconds: Int64) -> String {
        let seconds = milliseconds / 1_000
        let millis = Int(milliseconds % 1_000)
        let days = Int(seconds / 86_400)
        let secondOfDay = Int(seconds % 86_400)
        let (year, month, day) = civil(fromDays: days)
        var text: [UInt8] = []
        text.reserveCapacity(24)
        // `value` in decimal, zero-padded to `width` digits, then `separator`.
        func put(_ value: Int, _ width: Int, then separator: Unicode.Scalar) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while value / divisor >= 10 { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(48 + value / divisor % 10))
                divisor /= 10
            }
            text.append(UInt8(ascii: separator))
        }
        put(year, 4, then: "-")
        put(month, 2, then: "-")
        put(day, 2, then: "T")
        put(secondOfDay / 3_600, 2, then: ":")
        put(secondOfDay / 60 % 60, 2, then: ":")
        put(secondOfDay % 60, 2, then: ".")
        put(millis, 3, then: "Z")
        return String(decoding: text, as: UTF8.self)
    }

    /// The milliseconds since the epoch of text in exactly the form ``format(milliseconds:)``
    /// writes, or nil for anything else.
    static func parse(_ text: String) -> Int64? {
        let c = Array(text.utf8)
        guard c.count == 24, c[4] == 45, c[7] == 45, c[10] == 84, c[13] == 58, c[16] == 58, c[19] == 46, c[23] == 90,
            let year = number(c[0..<4]), let month = number(c[5..<7]), let day = number(c[8..<10]),
            let hour = number(c[11..<13]), let minute = number(c[14..<16]), let second = number(c[17..<19]),
            let millis = number(c[20..<23]), year >= 1970, (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = Self.days(fromYear: year, month: month, day: day)
        guard civil(fromDays: days) == (year, month, day) else { return nil }
        return (Int64(days) * 86_400 + Int64(hour * 3_600 + minute * 60 + second)) * 1_000 + Int64(millis)
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (48...57).contains(digit) else { return nil }
            value = value * 10 + Int(digit - 48)
        }
        return value
    }

    // Howard Hinnant's days-from-civil and civil-from-days algorithms.
    private static func days(fromYear year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
