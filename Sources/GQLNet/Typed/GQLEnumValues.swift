/// A generated enum's schema values, each with its case: what ``GQLEnum`` decodes from and encodes to, in one table
/// instead of two switches per enum.
///
/// ```swift
/// public enum PostStatus: GQLEnum {
///     case draft
///     case published
///     case unknown(String)
///
///     public static let gqlValues: GQLEnumValues<Self> = [.draft: "DRAFT", .published: "PUBLISHED"]
///     public var rawValue: String { if case .unknown(let value) = self { value } else { Self.gqlValues.name(of: self) } }
/// }
/// ```
public struct GQLEnumValues<Value: Hashable & Sendable>: Sendable, ExpressibleByDictionaryLiteral {
    private let names: [Value: String]
    private let values: [String: Value]

    /// The cases and their names in the schema; a case or name given twice keeps its first pairing.
    public init(dictionaryLiteral elements: (Value, String)...) {
        var names: [Value: String] = [:]
        var values: [String: Value] = [:]
        for (value, name) in elements {
            if names[value] == nil { names[value] = name }
            if values[name] == nil { values[name] = value }
        }
        self.names = names
        self.values = values
    }

    /// The schema's name of a case; empty for one not in the table (the `unknown` case carries its own).
    public func name(of value: Value) -> String { names[value] ?? "" }

    /// The case named `name` in the schema, or nil for a name the table does not know.
    public func value(named name: String) -> Value? { values[name] }
}
