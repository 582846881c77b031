/// A language the login screen's texts are translated into.
public enum LoginLanguage: String, Sendable, Hashable, CaseIterable {
    /// English, the fallback for every missing text.
    case english = "en"
    /// German.
    case german = "de"
    /// Simplified Chinese.
    case simplifiedChinese = "zh-Hans"

    /// Matches a BCP 47 language tag ("de-AT", "zh-CN", "zh-Hans-SG", "en_GB").
    ///
    /// Chinese tags match when they are bare "zh", name simplified script, or
    /// name a region that uses it (CN, SG, MY); "zh-TW" and "zh-Hant" do not.
    /// - Parameter identifier: The language tag.
    public init?(identifier: String) {
        let parts = identifier.replacing("_", with: "-").split(separator: "-").map { $0.lowercased() }
        switch parts.first {
        case "en": self = .english
        case "de": self = .german
        case "zh":
            let rest = Set(parts.dropFirst())
            let simplifiedRegions: Set = ["cn", "sg", "my"]
            guard !rest.contains("hant"),
                rest.isEmpty || rest.contains("hans") || !rest.isDisjoint(with: simplifiedRegions)
            else { return nil }
            self = .simplifiedChinese
        default: return nil
        }
    }

    /// The first of the user's preferred languages that has a table, or English.
    /// - Parameter identifiers: BCP 47 tags, most preferred first.
    /// - Returns: The language to show.
    public static func preferred(from identifiers: [String]) -> LoginLanguage {
        identifiers.lazy.compactMap(LoginLanguage.init(identifier:)).first ?? .english
    }

    /// This language's texts.
    var table: [MessageKey: String] {
        switch self {
        case .english: Self.englishTable
        case .german: Self.germanTable
        case .simplifiedChinese: Self.simplifiedChineseTable
        }
    }
}
