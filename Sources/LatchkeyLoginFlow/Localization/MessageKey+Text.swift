extension MessageKey {
    /// The text for this key in `language`, falling back to English when the
    /// language's table lacks it (and to the raw key if English does too).
    /// - Parameter language: The language to show.
    /// - Returns: The text, with any placeholder left in place.
    public func text(in language: LoginLanguage) -> String {
        language.table[self] ?? LoginLanguage.english.table[self] ?? rawValue
    }

    /// The text for this key in `language`, with each `{name}` placeholder
    /// replaced by its value.
    /// - Parameters:
    ///   - language: The language to show.
    ///   - values: Placeholder names (without braces) and their values.
    /// - Returns: The filled-in text.
    public func text(in language: LoginLanguage, replacing values: [String: String]) -> String {
        values.reduce(text(in: language)) { text, pair in
            text.replacing("{\(pair.key)}", with: pair.value)
        }
    }

    /// The rate-limit countdown text for `remaining`, rounded up to whole seconds.
    /// - Parameters:
    ///   - remaining: The time left, as ``Login/State/retryRemaining`` gives it.
    ///   - language: The language to show.
    /// - Returns: The filled-in ``retryCountdown`` text.
    public static func retryCountdownText(remaining: Duration, in language: LoginLanguage) -> String {
        let (seconds, attoseconds) = remaining.components
        let whole = seconds + (attoseconds > 0 ? 1 : 0)
        return MessageKey.retryCountdown.text(in: language, replacing: ["seconds": String(max(0, whole))])
    }
}
