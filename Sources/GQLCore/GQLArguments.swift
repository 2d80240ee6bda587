/// Arguments bound to the `?` or named parameters of an SQL condition. Values are always bound, never pasted
/// into the SQL text.
///
/// ```swift
/// let adults = try User.fetchAll(db, "age >= ? AND age <= ?", [minAge, maxAge])
/// let same = try User.fetchAll(db, "age >= :min AND age <= :max", [":min": 18, ":max": 99])
/// ```
public struct GQLArguments: Sendable, Hashable {
    /// Values for `?` / `?NNN` parameters, in order.
    public var positional: [GQLValue]
    /// Values for `:name`, `@name` or `$name` parameters. A key may be written with or without its prefix.
    public var named: [String: GQLValue]

    /// No arguments.
    public init() {
        positional = []
        named = [:]
    }

    /// Positional arguments.
    public init(_ values: [any GQLValueConvertible]) {
        positional = values.map(\.gqlValue)
        named = [:]
    }

    /// Named arguments.
    public init(_ values: [String: any GQLValueConvertible]) {
        positional = []
        named = values.mapValues(\.gqlValue)
    }

    /// Whether there is nothing to bind.
    public var isEmpty: Bool { positional.isEmpty && named.isEmpty }
}

extension GQLArguments: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: any GQLValueConvertible...) {
        self.init(elements)
    }
}

extension GQLArguments: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, any GQLValueConvertible)...) {
        self.init()
        for (key, value) in elements { named[key] = value.gqlValue }
    }
}
