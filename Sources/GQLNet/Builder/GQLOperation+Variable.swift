extension GQLOperation {
    /// A variable the operation declares: `$name: Type = default`.
    ///
    /// The type is written as in GraphQL: a name, `[Type]` for a list, a trailing `!` for non-null.
    ///
    /// ```swift
    /// let op = GQLOperation.query("Films", variables: [.init("first", "Int", default: 10), .init("ids", "[ID!]!")]) {
    ///     GQLOperation.Field("films", arguments: ["first": .variable("first"), "ids": .variable("ids")]) { "title" }
    /// }
    /// ```
    public struct Variable: Sendable, Hashable {
        /// The variable's name, without the `$`.
        public var name: String
        /// The variable's type, such as `ID!` or `[String!]`.
        public var type: String
        /// The value used when the request does not provide one; constant (no variables inside).
        public var defaultValue: Value?

        /// Declares a variable.
        ///
        /// ```swift
        /// let withDirector = GQLOperation.Variable("withDirector", "Boolean!", default: false)
        /// ```
        public init(_ name: String, _ type: String, default defaultValue: Value? = nil) {
            self.name = name
            self.type = type
            self.defaultValue = defaultValue
        }
    }
}

/// A parsed variable type, rendered in canonical form (no spaces).
indirect enum TypeReference: Equatable {
    case named(String)
    case list(TypeReference)
    case nonNull(TypeReference)

    /// Parses `text` (`ID`, `[ID!]!` …), ignoring white space between tokens but not inside a name; `nil` when it
    /// is not a GraphQL type.
    init?(parsing text: String) {
        var scalars = Array(text.unicodeScalars)[...]
        guard let type = Self.parse(&scalars, depth: 0) else { return nil }
        Self.skipSpace(&scalars)
        guard scalars.isEmpty else { return nil }
        self = type
    }

    /// Drops the spaces, tabs and line breaks before the next token.
    private static func skipSpace(_ scalars: inout ArraySlice<Unicode.Scalar>) {
        while let first = scalars.first, [" ", "\t", "\n", "\r"].contains(first) { scalars.removeFirst() }
    }

    /// Lists nest at most this deep, so a hostile type string cannot exhaust the stack.
    private static let maximumDepth = 32

    private static func parse(_ scalars: inout ArraySlice<Unicode.Scalar>, depth: Int) -> TypeReference? {
        var type: TypeReference
        skipSpace(&scalars)
        if scalars.first == "[" {
            guard depth < maximumDepth else { return nil }
            scalars.removeFirst()
            guard let element = parse(&scalars, depth: depth + 1) else { return nil }
            skipSpace(&scalars)
            guard scalars.first == "]" else { return nil }
            scalars.removeFirst()
            type = .list(element)
        } else {
            let name = scalars.prefix(while: { GQLOperation.Renderer.isNameContinue($0) })
            guard let first = name.first, GQLOperation.Renderer.isNameStart(first) else { return nil }
            scalars.removeFirst(name.count)
            type = .named(String(String.UnicodeScalarView(name)))
        }
        skipSpace(&scalars)
        if scalars.first == "!" {
            scalars.removeFirst()
            type = .nonNull(type)
        }
        return type
    }

    var text: String {
        switch self {
        case .named(let name): name
        case .list(let element): "[\(element.text)]"
        case .nonNull(let type): type.text + "!"
        }
    }
}
