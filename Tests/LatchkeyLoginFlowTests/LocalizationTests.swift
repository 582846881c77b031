import Testing

@testable import LatchkeyLoginFlow

@Suite("Localisation", .sandboxed)
struct LocalizationTests {
    @Test("every key exists in every table, and no text is empty", arguments: LoginLanguage.allCases)
    func complete(language: LoginLanguage) {
        for key in MessageKey.allCases {
            let text = language.table[key]
            #expect(text != nil, "\(language) lacks \(key)")
            #expect(
                text.map { !$0.trimmingPrefix(while: \.isWhitespace).isEmpty } ?? false, "\(language) \(key) is empty")
        }
        #expect(language.table.count == MessageKey.allCases.count)
    }

    /// The `{name}` placeholders of a text.
    static func placeholders(in text: String) -> Set<String> {
        Set(text.matches(of: /\{[a-z]+\}/).map { String(text[$0.range]) })
    }

    @Test("every translation keeps the placeholders of the English text", arguments: LoginLanguage.allCases)
    func placeholders(language: LoginLanguage) {
        for key in MessageKey.allCases {
            #expect(
                Self.placeholders(in: key.text(in: language)) == Self.placeholders(in: key.text(in: .english)),
                "\(language) \(key)")
        }
        #expect(Self.placeholders(in: MessageKey.signedInAs.text(in: language)) == ["{account}"])
        #expect(!MessageKey.signedInAs.text(in: language, replacing: ["account": "alice"]).contains("{"))
    }

    @Test(
        "the translations differ from English (no untranslated copy)",
        arguments: [LoginLanguage.german, .simplifiedChinese])
    func translated(language: LoginLanguage) {
        for key in MessageKey.allCases {
            #expect(key.text(in: language) != key.text(in: .english), "\(language) \(key)")
        }
    }

    @Test(
        "language tags pick the table, English when none fits",
        arguments: [
            ("en-GB", LoginLanguage.english), ("de", .german), ("de-AT", .german), ("de_CH", .german),
            ("zh", .simplifiedChinese), ("zh-CN", .simplifiedChinese), ("zh-Hans", .simplifiedChinese),
            ("zh-Hans-SG", .simplifiedChinese),
        ])
    func tags(tag: String, language: LoginLanguage) {
        #expect(LoginLanguage(identifier: tag) == language)
    }

    @Test("traditional Chinese and unknown languages fall back to the next preference, then English")
    func fallback() {
        #expect(LoginLanguage(identifier: "zh-TW") == nil)
        #expect(LoginLanguage(identifier: "zh-Hant-HK") == nil)
        #expect(LoginLanguage.preferred(from: ["fr-FR", "zh-TW", "de-DE"]) == .german)
        #expect(LoginLanguage.preferred(from: ["fr-FR"]) == .english)
        #expect(LoginLanguage.preferred(from: []) == .english)
    }

    @Test("placeholders are filled in")
    func replacing() {
        #expect(MessageKey.retryCountdown.text(in: .simplifiedChinese, replacing: ["seconds": "12"]) == "请在 12 秒后重试。")
        #expect(
            MessageKey.retryCountdownText(remaining: .seconds(3), in: .german)
                == "Sie können es in 3 s erneut versuchen.")
    }
}
