/// The plural of a model name, as AppSync's `improvePluralization` (npm `pluralize`) makes it for `list` and
/// `sync` queries: `Objects` → `Objects`, `Post` → `Posts`, `Category` → `Categories`, `Box` → `Boxes`,
/// `Person` → `People`.
///
/// A small rule set, not the whole of `pluralize`: irregular words, words that do not change, words that are
/// already plural, and the regular suffix rules. The case of the first letter is kept.
enum Pluralizer {
    private static let irregular: [String: String] = [
        "person": "people", "man": "men", "woman": "women", "child": "children", "mouse": "mice",
        "goose": "geese", "foot": "feet", "tooth": "teeth", "ox": "oxen", "die": "dice", "leaf": "leaves",
        "wolf": "wolves", "half": "halves", "shelf": "shelves", "loaf": "loaves", "thief": "thieves",
        "calf": "calves", "elf": "elves", "hero": "heroes", "potato": "potatoes", "tomato": "tomatoes",
        "echo": "echoes", "veto": "vetoes", "quiz": "quizzes", "index": "indices", "matrix": "matrices",
        "vertex": "vertices", "criterion": "criteria", "phenomenon": "phenomena", "analysis": "analyses",
        "crisis": "crises", "thesis": "theses", "axis": "axes", "cactus": "cacti", "radius": "radii",
    ]

    private static let uncountable: Set<String> = [
        "sheep", "fish", "deer", "series", "species", "news", "data", "information", "equipment", "rice",
        "money", "moose", "media", "metadata", "feedback", "software", "hardware", "music", "traffic",
    ]

    private static let irregularPlurals = Set(irregular.values)

    /// The plural of `name`, matched on its last camel-case word (`BlogPost` → `BlogPosts`).
    static func plural(of name: String) -> String {
        guard !name.isEmpty else { return name }
        // The last word of a camel-case name decides: `UserPerson` → `UserPeople`.
        let chars = Array(name)
        var start = chars.count - 1
        while start > 0, !chars[start].isUppercase { start -= 1 }
        let head = String(chars[..<start])
        let word = String(chars[start...])
        return head + pluralWord(word)
    }

    private static func pluralWord(_ word: String) -> String {
        let lower = word.lowercased()
        if uncountable.contains(lower) || irregularPlurals.contains(lower) { return word }
        if let plural = irregular[lower] { return keepCase(of: word, plural) }
        // Already plural: ends in s, but not in a singular -s ending.
        if lower.hasSuffix("s"), !lower.hasSuffix("ss"), !lower.hasSuffix("us"), !lower.hasSuffix("is"),
            lower.count > 2
        {
            return word
        }
        if lower.hasSuffix("is") { return String(word.dropLast(2)) + "es" }
        for suffix in ["s", "sh", "ch", "x", "z"] where lower.hasSuffix(suffix) { return word + "es" }
        if lower.hasSuffix("y"), lower.count > 1 {
            let before = lower[lower.index(lower.endIndex, offsetBy: -2)]
            if !"aeiou".contains(before) { return String(word.dropLast()) + "ies" }
        }
        if lower.hasSuffix("fe") { return String(word.dropLast(2)) + "ves" }
        return word + "s"
    }

    /// `plural` with the first letter's case of `word`.
    private static func keepCase(of word: String, _ plural: String) -> String {
        guard let first = word.first, first.isUppercase else { return plural }
        return plural.prefix(1).uppercased() + plural.dropFirst()
    }
}
