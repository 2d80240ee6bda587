/// Swift names for GraphQL names: keywords escaped, enum values in lowerCamelCase, nested types in UpperCamelCase,
/// and collisions (names that differ only in case, names Swift or the generated code already use) resolved the
/// same way every run.
enum Naming {
    /// Words Swift reserves, escaped with backticks where a GraphQL name uses them.
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default",
        "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
        "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true",
        "try", "Type", "Protocol", "some", "any", "borrowing", "consuming", "package", "actor", "async",
    ]

    /// Type names a generated type must not take: Swift's own, the runtime's and the generated code's.
    static let reservedTypes: Set<String> = [
        "String", "Int", "Double", "Float", "Bool", "Array", "Dictionary", "Set", "Optional", "Never", "Error",
        "Type", "Self", "Protocol", "Any", "AnyObject", "Decodable", "Encodable", "Codable", "Hashable", "Sendable",
        "Decoder", "Encoder", "CodingKeys", "CodingKey", "Data", "Date", "URL", "Variables", "Other", "GQLValue",
        "GQLNullable", "GQLEnum", "GQLSelectionSet", "GQLInputObject", "GQLVariables", "GQLTypename", "Swift",
        "GQLNet", "GQLCore", "GQLTypedQuery", "GQLTypedMutation", "GQLTypedSubscription", "Character",
    ]

    /// A property or case name: the name itself, in backticks when Swift reserves it.
    static func identifier(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// An initializer's parameter for a GraphQL name: the name as its label, and `_name` inside where Swift
    /// reserves the name (`init(class _class: String)`).
    static func parameter(_ name: String) -> String {
        keywords.contains(name) ? "\(label(name)) _\(name)" : name
    }

    /// An argument label: any word but `inout`, `var` and `let` may be one.
    static func label(_ name: String) -> String {
        ["inout", "var", "let"].contains(name) ? "`\(name)`" : name
    }

    /// The value of a parameter made by ``parameter(_:)``.
    static func argument(_ name: String) -> String {
        keywords.contains(name) ? "_\(name)" : name
    }

    /// `GetUser` from `getUser`.
    static func upperFirst(_ name: String) -> String {
        guard let first = name.first else { return name }
        return first.uppercased() + name.dropFirst()
    }

    /// `pullRequest` from `PULL_REQUEST`, `inProgress` from `inProgress` or `IN_PROGRESS`.
    static func lowerCamel(_ name: String) -> String {
        let parts = name.split(separator: "_").map(String.init)
        guard !parts.isEmpty else { return name }
        let shouting = name == name.uppercased()
        var result = ""
        for (index, part) in parts.enumerated() {
            let word = shouting ? part.lowercased() : part
            result += index == 0 ? lowerFirst(word) : upperFirst(word)
        }
        return result
    }

    static func lowerFirst(_ name: String) -> String {
        var prefix = name.prefix { $0.isUppercase }
        // `URLPath` → `urlPath`: an initialism lowercased up to the next word's capital.
        if prefix.count > 1 && prefix.count < name.count { prefix = prefix.dropLast() }
        return prefix.lowercased() + name.dropFirst(prefix.count)
    }

    /// The nested type name of a field's answer: `repositories` → `Repository` for a list, `owner` → `Owner`.
    static func typeName(forKey key: String, isList: Bool) -> String {
        var name = upperFirst(key)
        if isList {
            if name.hasSuffix("ies") && name.count > 4 {
                name = String(name.dropLast(3)) + "y"
            } else if name.hasSuffix("s") && !name.hasSuffix("ss") && name.count > 3 {
                name = String(name.dropLast())
            }
        }
        return name
    }

    /// `name`, or `name_`, `name__` … the first one `taken` does not hold; it is then taken.
    static func unique(_ name: String, in taken: inout Set<String>) -> String {
        var candidate = name
        while taken.contains(candidate) || keywords.contains(candidate) { candidate += "_" }
        taken.insert(candidate)
        return candidate
    }

    /// A string literal holding `text` as it is: plain when it can be, else raw with as many `#` as it needs.
    static func rawString(_ text: String) -> String {
        if !text.contains("\"") && !text.contains("\\") { return "\"\(text)\"" }
        var hashes = "#"
        while text.contains("\"" + hashes) || text.contains("\\" + hashes) {
            hashes += "#"
        }
        return "\(hashes)\"\(text)\"\(hashes)"
    }
}
