/// A GraphQL operation built in Swift — query, mutation or subscription — that renders to text which always
/// parses as GraphQL.
///
/// Selections are listed in a builder block: a string is a plain field, ``Field`` takes an alias, arguments,
/// directives and its own block, and fragments are spread by value or by name.
///
/// ```swift
/// let filmParts = GQLOperation.Fragment("FilmParts", on: "Film") { "title"; "releaseDate" }
/// let op = GQLOperation.query("GetFilm", variables: [.init("id", "ID!"), .init("withDirector", "Boolean!")]) {
///     GQLOperation.Field("film", arguments: ["id": .variable("id")]) {
///         filmParts
///         GQLOperation.Field("director", alias: "boss", directives: [.include(if: .variable("withDirector"))]) {
///             "name"
///         }
///     }
/// }
/// let text = try op.render()
/// // query GetFilm($id: ID!, $withDirector: Boolean!) { film(id: $id) { ...FilmParts
/// //   boss: director @include(if: $withDirector) { name } } } fragment FilmParts on Film { title releaseDate }
/// let result = try await server.execute(op, ["id": "1", "withDirector": true])
/// ```
///
/// Building never fails; ``render(_:includingFragments:)`` checks the faults a parser or a server rejects whatever the
/// schema and throws a ``GQLError`` that names the fault and where it is: an invalid name, an empty selection set, a
/// variable used but not declared or declared but not used, a fragment spread without a definition.
public struct GQLOperation: Sendable, Hashable {
    /// How rendered text is laid out.
    ///
    /// ```swift
    /// let oneLine = try op.render(.compact)   // query Q { a { b } }
    /// let indented = try op.render(.pretty)   // query Q {\n  a {\n    b\n  }\n}
    /// ```
    public enum Format: Sendable, Hashable {
        /// One line, selections separated by spaces: the form to send.
        case compact
        /// One selection per line, indented by two spaces; definitions separated by a blank line.
        case pretty
    }

    /// Whether this is a query, a mutation or a subscription.
    public var kind: GQLQuery.OperationType
    /// The operation's name; `nil` for an anonymous operation.
    public var name: String?
    /// The variables the operation declares.
    public var variables: [Variable]
    /// The directives on the operation.
    public var directives: [Directive]
    /// The top-level selections; must not be empty.
    public var selections: [Selection]
    /// Fragment definitions for spreads made by name; rendering includes only those the operation uses.
    public var fragments: [Fragment]

    /// Creates an operation of any kind.
    ///
    /// ```swift
    /// let op = GQLOperation(.subscription, name: "OnComment") {
    ///     GQLOperation.Field("commentAdded") { "id"; "text" }
    /// }
    /// ```
    public init(
        _ kind: GQLQuery.OperationType, name: String? = nil, variables: [Variable] = [],
        directives: [Directive] = [], fragments: [Fragment] = [], @SelectionBuilder _ selections: () -> [Selection]
    ) {
        self.kind = kind
        self.name = name
        self.variables = variables
        self.directives = directives
        self.fragments = fragments
        self.selections = selections()
    }

    /// Creates a query.
    ///
    /// ```swift
    /// let op = GQLOperation.query("GetFilm", variables: [.init("id", "ID!")]) {
    ///     GQLOperation.Field("film", arguments: ["id": .variable("id")]) { "title" }
    /// }
    /// ```
    public static func query(
        _ name: String? = nil, variables: [Variable] = [], directives: [Directive] = [], fragments: [Fragment] = [],
        @SelectionBuilder _ selections: () -> [Selection]
    ) -> GQLOperation {
        GQLOperation(
            .query, name: name, variables: variables, directives: directives, fragments: fragments, selections)
    }

    /// Creates a mutation.
    ///
    /// ```swift
    /// let op = GQLOperation.mutation("CreateObject", variables: [.init("input", "CreateObjectsInput!")]) {
    ///     GQLOperation.Field("createObjects", arguments: ["input": .variable("input")]) { "objectId" }
    /// }
    /// ```
    public static func mutation(
        _ name: String? = nil, variables: [Variable] = [], directives: [Directive] = [], fragments: [Fragment] = [],
        @SelectionBuilder _ selections: () -> [Selection]
    ) -> GQLOperation {
        GQLOperation(
            .mutation, name: name, variables: variables, directives: directives, fragments: fragments, selections)
    }

    /// Creates a subscription.
    ///
    /// ```swift
    /// let op = GQLOperation.subscription("OnComment", variables: [.init("postId", "ID!")]) {
    ///     GQLOperation.Field("commentAdded", arguments: ["postId": .variable("postId")]) { "text" }
    /// }
    /// ```
    public static func subscription(
        _ name: String? = nil, variables: [Variable] = [], directives: [Directive] = [], fragments: [Fragment] = [],
        @SelectionBuilder _ selections: () -> [Selection]
    ) -> GQLOperation {
        GQLOperation(
            .subscription, name: name, variables: variables, directives: directives, fragments: fragments,
            selections)
    }

    /// The operation as GraphQL text, followed by the definitions of the fragments it uses, transitively, in order of
    /// first use.
    ///
    /// ```swift
    /// let text = try op.render()                                   // one line, fragments appended
    /// let pretty = try op.render(.pretty)                          // indented, blank line between definitions
    /// let bare = try op.render(includingFragments: false)          // the fragments are sent from elsewhere
    /// ```
    ///
    /// - Parameters:
    ///   - format: ``Format/compact`` (default) or ``Format/pretty``.
    ///   - includingFragments: append the definitions of the spread fragments. Each must be known, carried by a
    ///     spread made from a ``Fragment`` or listed in ``fragments``. Pass `false` to render the operation alone.
    /// - Throws: ``GQLError`` `.invalidArgument` for an invalid name or type, an empty selection set, a duplicate
    ///   argument or variable, a variable used but not declared (or used in a default value), a variable declared but
    ///   not used (when every spread fragment is rendered), two fields of one selection set with one response name
    ///   but different names or arguments, selection sets nested more than 256 deep, a spread without a definition,
    ///   two different fragments with one name, or fragments that spread each other in a cycle; `.invalidValue` for
    ///   a NaN or infinite number or a value nested more than 256 deep. The message says what and where.
    public func render(_ format: Format = .compact, includingFragments: Bool = true) throws -> String {
        var renderer = Renderer(format: format, operationName: name)
        try renderer.write(self)
        var definitions = [renderer.output]
        if includingFragments {
            for fragment in try usedFragments() {
                var fragmentRenderer = Renderer(format: format, operationName: name)
                try fragmentRenderer.write(fragment)
                renderer.variableUses += fragmentRenderer.variableUses
                definitions.append(fragmentRenderer.output)
            }
        }
        try renderer.checkVariablesDeclared(variables)
        // Fragments sent from elsewhere may use variables, so unused ones are a fault only when all the text is known.
        if includingFragments || !renderer.spreadsFragments { try renderer.checkVariablesUsed(variables) }
        return definitions.joined(separator: format == .pretty ? "\n\n" : " ")
    }

    /// The definitions of the fragments the operation spreads, transitively, in order of first use.
    ///
    /// ```swift
    /// let names = try op.usedFragments().map(\.name)   // ["FilmParts", "PersonParts"]
    /// ```
    /// - Throws: ``GQLError`` `.invalidArgument` for a spread without a definition, two different fragments with one
    ///   name, or a cycle of spreads.
    public func usedFragments() throws -> [Fragment] {
        var collector = FragmentCollector(operationName: name)
        for fragment in fragments { try collector.register(fragment, at: "fragments:") }
        try collector.registerCarried(in: selections, listed: fragments)
        try collector.visit(selections)
        return collector.ordered
    }
}

extension GQLOperation: CustomStringConvertible {
    /// The compact text with its fragments, or a note saying why it cannot be rendered.
    public var description: String {
        do { return try render() } catch { return "<invalid operation: \(error)>" }
    }
}

/// Finds the fragments an operation uses, in order of first use, and the faults among them.
///
/// Both passes walk with an explicit stack rather than recursion, so neither deep selections nor long chains of
/// fragments can exhaust the call stack.
private struct FragmentCollector {
    let operationName: String?
    var known: [String: GQLOperation.Fragment] = [:]
    var ordered: [GQLOperation.Fragment] = []

    init(operationName: String?) { self.operationName = operationName }

    mutating func register(_ fragment: GQLOperation.Fragment, at place: String) throws {
        if let existing = known[fragment.name], existing != fragment {
            throw GQLError(
                .invalidArgument,
                "two different fragments are called \(fragment.name.debugDescription) (\(place)); "
                    + "fragment names must be unique in a document", operation: operationName)
        }
        known[fragment.name] = fragment
    }

    /// First pass: registers every definition carried by a spread made from a ``GQLOperation/Fragment`` value, in the
    /// operation, in the listed fragments and inside carried definitions, so a spread by name resolves wherever in
    /// the document the definition is carried.
    mutating func registerCarried(in selections: [GQLOperation.Selection], listed: [GQLOperation.Fragment]) throws {
        var pending: [(selections: [GQLOperation.Selection], owner: String?)] = [(selections, nil)]
        pending += listed.map { ($0.selections, $0.name) }
        var walked: Set<String> = []
        while let next = pending.popLast() {
            let (selections, owner) = next
            for selection in selections {
                switch selection {
                case .field(let field): pending.append((field.selections, owner))
                case .inlineFragment(let inline): pending.append((inline.selections, owner))
                case .fragmentSpread(let spread):
                    guard let definition = spread.definition else { continue }
                    try register(definition, at: "spread \(Self.place(owner))")
                    if walked.insert(definition.name).inserted {
                        pending.append((definition.selections, definition.name))
                    }
                }
            }
        }
    }

    /// Second pass: resolves the spreads depth-first, in document order, appending each definition at its first use.
    mutating func visit(_ selections: [GQLOperation.Selection]) throws {
        var stack: [(selections: ArraySlice<GQLOperation.Selection>, chain: [String])] = [(selections[...], [])]
        while !stack.isEmpty {
            guard let selection = stack[stack.count - 1].selections.popFirst() else {
                stack.removeLast()
                continue
            }
            let chain = stack[stack.count - 1].chain
            switch selection {
            case .field(let field): stack.append((field.selections[...], chain))
            case .inlineFragment(let inline): stack.append((inline.selections[...], chain))
            case .fragmentSpread(let spread):
                guard let definition = known[spread.name] else {
                    throw GQLError(
                        .invalidArgument,
                        "fragment \(spread.name.debugDescription) is spread \(Self.place(chain.last)) but not "
                            + "defined; pass it in `fragments:`, spread the Fragment value, or render with "
                            + "includingFragments: false", operation: operationName)
                }
                if chain.contains(spread.name) {
                    throw GQLError(
                        .invalidArgument,
                        "fragments spread each other in a cycle: \((chain + [spread.name]).joined(separator: " > "))",
                        operation: operationName)
                }
                if ordered.contains(where: { $0.name == spread.name }) { continue }
                ordered.append(definition)
                stack.append((definition.selections[...], chain + [spread.name]))
            }
        }
    }

    private static func place(_ fragment: String?) -> String {
        fragment.map { "in fragment \($0)" } ?? "in the operation"
    }
}
