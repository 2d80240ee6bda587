extension GQLOperation {
    /// A named fragment definition: `fragment Name on Type { selections }`.
    ///
    /// List a fragment in a builder block to spread it; rendering the operation then appends its definition:
    ///
    /// ```swift
    /// let filmParts = GQLOperation.Fragment("FilmParts", on: "Film") {
    ///     "title"
    ///     GQLOperation.Field("director") { "name" }
    /// }
    /// let op = GQLOperation.query("Films") {
    ///     GQLOperation.Field("allFilms") { filmParts }
    /// }
    /// let text = try op.render()   // "query Films { allFilms { ...FilmParts } } fragment FilmParts on Film { … }"
    /// ```
    public struct Fragment: Sendable, Hashable {
        /// The fragment's name; any name but `on`.
        public var name: String
        /// The type the fragment applies to.
        public var typeCondition: String
        /// The directives on the definition.
        public var directives: [Directive]
        /// The selections; must not be empty.
        public var selections: [Selection]

        /// Creates a fragment definition.
        ///
        /// ```swift
        /// let personParts = GQLOperation.Fragment("PersonParts", on: "Person") { "name"; "birthYear" }
        /// ```
        public init(
            _ name: String, on typeCondition: String, directives: [Directive] = [],
            @SelectionBuilder _ selections: () -> [Selection]
        ) {
            self.name = name
            self.typeCondition = typeCondition
            self.directives = directives
            self.selections = selections()
        }

        /// The definition as GraphQL text, without the fragments it spreads.
        ///
        /// ```swift
        /// let text = try personParts.render()   // "fragment PersonParts on Person { name birthYear }"
        /// ```
        /// - Throws: ``GQLError`` `.invalidArgument` naming an invalid name and where it is, or an empty selection
        ///   set; `.invalidValue` for a NaN or infinite number.
        public func render(_ format: Format = .compact) throws -> String {
            var renderer = Renderer(format: format, operationName: nil)
            try renderer.write(self)
            return renderer.output
        }
    }
}
