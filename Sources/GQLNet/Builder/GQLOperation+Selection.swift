extension GQLOperation {
    /// One entry of a selection set: a field, a fragment spread or an inline fragment.
    ///
    /// The ``SelectionBuilder`` makes these from what a builder block lists, so they are rarely written by hand:
    ///
    /// ```swift
    /// let selections: [GQLOperation.Selection] = [.field(.init("title")), .fragmentSpread(.init("FilmParts"))]
    /// ```
    public enum Selection: Sendable, Hashable {
        /// A field, possibly with arguments, an alias and its own selections.
        case field(Field)
        /// `...Name`: the selections of a named fragment.
        case fragmentSpread(FragmentSpread)
        /// `... on Type { … }`: selections that apply when the object has a given type.
        case inlineFragment(InlineFragment)
    }

    /// A field to fetch: `alias: name(arguments) @directives { selections }`.
    ///
    /// ```swift
    /// GQLOperation.Field("film", arguments: ["id": .variable("id")]) {
    ///     "title"
    ///     GQLOperation.Field("director", alias: "boss") { "name" }
    /// }
    /// ```
    ///
    /// A field without selections is a leaf (a scalar or an enum); one with selections fetches an object.
    public struct Field: Sendable, Hashable {
        /// The field's name in the schema.
        public var name: String
        /// The key the result uses instead of ``name``, if any.
        public var alias: String?
        /// The field's arguments, in order.
        public var arguments: [Argument]
        /// The directives on the field.
        public var directives: [Directive]
        /// The fields and fragments selected on the field's value; empty for a leaf.
        public var selections: [Selection]

        /// Creates a field.
        ///
        /// ```swift
        /// let field = GQLOperation.Field("allFilms", alias: "films", arguments: ["first": 5]) {
        ///     "title"
        ///     "releaseDate"
        /// }
        /// ```
        public init(
            _ name: String, alias: String? = nil, arguments: KeyValuePairs<String, Value> = [:],
            directives: [Directive] = [], @SelectionBuilder _ selections: () -> [Selection] = { [] }
        ) {
            self.name = name
            self.alias = alias
            self.arguments = arguments.map { Argument($0.key, $0.value) }
            self.directives = directives
            self.selections = selections()
        }
    }

    /// `...Name`: spreads the selections of a named fragment.
    ///
    /// Spread by name when the definition is passed to the operation (`fragments:`) or sent from elsewhere; listing a
    /// ``Fragment`` value in a builder block spreads it and carries its definition along.
    ///
    /// ```swift
    /// GQLOperation.Field("film", arguments: ["id": 1]) { GQLOperation.FragmentSpread("FilmParts") }
    /// ```
    public struct FragmentSpread: Sendable, Hashable {
        /// The name of the fragment spread.
        public var name: String
        /// The directives on the spread.
        public var directives: [Directive]
        /// The definition, when the spread was made from a ``Fragment`` value.
        var definition: Fragment?

        /// Creates a spread of the fragment called `name`.
        ///
        /// ```swift
        /// let spread = GQLOperation.FragmentSpread("FilmParts", directives: [.skip(if: .variable("brief"))])
        /// ```
        public init(_ name: String, directives: [Directive] = []) {
            self.name = name
            self.directives = directives
            self.definition = nil
        }

        /// Creates a spread of `fragment` that carries its definition, so rendering includes it.
        ///
        /// ```swift
        /// let spread = GQLOperation.FragmentSpread(filmParts, directives: [.include(if: .variable("full"))])
        /// ```
        public init(_ fragment: Fragment, directives: [Directive] = []) {
            self.name = fragment.name
            self.directives = directives
            self.definition = fragment
        }
    }

    /// `... on Type @directives { selections }`: selections that apply only to objects of a type.
    ///
    /// ```swift
    /// GQLOperation.Field("search", arguments: ["text": "han"]) {
    ///     "__typename"
    ///     GQLOperation.InlineFragment(on: "Human") { "height" }
    ///     GQLOperation.InlineFragment(on: "Droid") { "primaryFunction" }
    /// }
    /// ```
    public struct InlineFragment: Sendable, Hashable {
        /// The type the selections apply to; `nil` applies them to every type (useful with directives).
        public var typeCondition: String?
        /// The directives on the inline fragment.
        public var directives: [Directive]
        /// The selections; must not be empty.
        public var selections: [Selection]

        /// Creates an inline fragment.
        ///
        /// ```swift
        /// let details = GQLOperation.InlineFragment(directives: [.include(if: .variable("full"))]) { "synopsis" }
        /// ```
        public init(
            on typeCondition: String? = nil, directives: [Directive] = [],
            @SelectionBuilder _ selections: () -> [Selection]
        ) {
            self.typeCondition = typeCondition
            self.directives = directives
            self.selections = selections()
        }
    }

    /// Builds a selection set from a block: a string is a plain field, and fields, spreads, inline fragments and
    /// ``Fragment`` values (spread with their definition) can be listed, with `if`, `switch` and `for`.
    ///
    /// ```swift
    /// let op = GQLOperation.query("Films") {
    ///     GQLOperation.Field("allFilms") {
    ///         "title"
    ///         if withDirector { GQLOperation.Field("director") { "name" } }
    ///         for extra in extraFields { extra }
    ///     }
    /// }
    /// ```
    @resultBuilder
    public enum SelectionBuilder {
        /// A field with no arguments and no selections, named by a string.
        public static func buildExpression(_ name: String) -> [Selection] { [.field(Field(name))] }
        /// A field.
        public static func buildExpression(_ field: Field) -> [Selection] { [.field(field)] }
        /// A fragment spread.
        public static func buildExpression(_ spread: FragmentSpread) -> [Selection] { [.fragmentSpread(spread)] }
        /// An inline fragment.
        public static func buildExpression(_ fragment: InlineFragment) -> [Selection] { [.inlineFragment(fragment)] }
        /// A spread of a fragment definition, which rendering includes.
        public static func buildExpression(_ fragment: Fragment) -> [Selection] {
            [.fragmentSpread(FragmentSpread(fragment))]
        }
        /// A selection.
        public static func buildExpression(_ selection: Selection) -> [Selection] { [selection] }
        /// Several selections.
        public static func buildExpression(_ selections: [Selection]) -> [Selection] { selections }

        /// The lines of a block, in order.
        public static func buildBlock(_ parts: [Selection]...) -> [Selection] { parts.flatMap { $0 } }
        /// An `if` without `else`: its selections, or none.
        public static func buildOptional(_ part: [Selection]?) -> [Selection] { part ?? [] }
        /// The first branch of an `if`/`else` or `switch`.
        public static func buildEither(first part: [Selection]) -> [Selection] { part }
        /// The second branch of an `if`/`else` or `switch`.
        public static func buildEither(second part: [Selection]) -> [Selection] { part }
        /// The iterations of a `for` loop, in order.
        public static func buildArray(_ parts: [[Selection]]) -> [Selection] { parts.flatMap { $0 } }
        /// An `if #available` branch.
        public static func buildLimitedAvailability(_ part: [Selection]) -> [Selection] { part }
    }
}
