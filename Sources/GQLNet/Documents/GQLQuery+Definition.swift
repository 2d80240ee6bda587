import GraphQL

extension GQLQuery {
    /// One named operation or fragment as loaded: its own text, where it came from, and the fragments it spreads
    /// directly. No AST is kept; the spreads are all resolution needs.
    struct Definition: Sendable {
        enum Kind: Sendable { case operation(OperationType), fragment }

        /// A `...Name` inside the definition's selection sets.
        struct Spread: Sendable {
            var name: String
            var line: Int
            var column: Int
        }

        var name: String
        var kind: Kind
        var text: String
        var sourceName: String
        var line: Int
        var spreads: [Spread]

        var place: String { "\(sourceName):\(line)" }
    }

    /// Parses `body` with GraphQLSwift and returns its named operations and fragments.
    ///
    /// Line endings are normalised to `\n` first (CRLF and lone CR files work, lines and columns stay the same).
    /// Type-system definitions (a `schema.graphql` next to the operations) are skipped.
    static func definitions(in body: String, sourceName: String) throws -> [Definition] {
        var body = body
        if body.hasPrefix("\u{FEFF}") { body.removeFirst() }
        if body.contains("\r") {
            body = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        }
        let document: GraphQL.Document
        do {
            document = try parse(source: Source(body: body, name: sourceName))
        } catch let error as GraphQLError {
            throw syntaxError(error, sourceName: sourceName)
        }
        let bytes = Array(body.utf8)
        func text(_ node: some Node) -> String {
            guard let start = node.loc?.startToken, let end = closingBrace(after: start), start.start >= 0,
                end.end <= bytes.count, start.start < end.end
            else { return print(ast: node) }
            return String(decoding: bytes[start.start..<end.end], as: UTF8.self)
        }

        var result: [Definition] = []
        for definition in document.definitions {
            switch definition {
            case let operation as OperationDefinition:
                let line = operation.loc?.startToken.line ?? 0
                guard let name = operation.name?.value else {
                    throw GQLError(
                        .invalidArgument,
                        "Anonymous \(operation.operation.rawValue) at \(sourceName):\(line): every operation in the "
                            + "registry needs a name to be looked up by.")
                }
                result.append(
                    Definition(
                        name: name, kind: .operation(OperationType(operation.operation)), text: text(operation),
                        sourceName: sourceName, line: line, spreads: spreads(in: operation.selectionSet)))
            case let fragment as FragmentDefinition:
                result.append(
                    Definition(
                        name: fragment.name.value, kind: .fragment, text: text(fragment), sourceName: sourceName,
                        line: fragment.loc?.startToken.line ?? 0, spreads: spreads(in: fragment.selectionSet)))
            default:
                continue  // type-system definitions and extensions
            }
        }
        return result
    }

    /// The `}` that closes the definition starting at `start`: the match of the first `{` outside parentheses
    /// (braces inside `(...)` are variable defaults or directive arguments).
    ///
    /// GraphQLSwift 4.3.0 computes a definition's `loc` before parsing its body, so `loc.end` stops early; the
    /// lexer's token list is exact, so the definition's text is taken from its first token to this one.
    private static func closingBrace(after start: Token) -> Token? {
        var token: Token? = start
        var parentheses = 0
        var braces = 0
        while let current = token, current.kind != .eof {
            switch current.kind {
            case .openingParenthesis: parentheses += 1
            case .closingParenthesis: parentheses -= 1
            case .openingBrace: braces += 1
            case .closingBrace:
                braces -= 1
                if braces == 0 && parentheses == 0 { return current }
            default: break
            }
            token = current.next
        }
        return nil
    }

    /// The fragment spreads in `selectionSet`, in source order, including those inside fields and inline fragments.
    private static func spreads(in selectionSet: SelectionSet) -> [Definition.Spread] {
        var found: [Definition.Spread] = []
        func walk(_ set: SelectionSet) {
            for selection in set.selections {
                switch selection {
                case let field as Field:
                    if let nested = field.selectionSet { walk(nested) }
                case let inline as InlineFragment:
                    walk(inline.selectionSet)
                case let spread as FragmentSpread:
                    found.append(
                        Definition.Spread(
                            name: spread.name.value, line: spread.loc?.startToken.line ?? 0,
                            column: spread.loc?.startToken.column ?? 0))
                default:
                    continue
                }
            }
        }
        walk(selectionSet)
        return found
    }

    /// A ``GQLError`` naming the file, line and column of a GraphQLSwift syntax error.
    private static func syntaxError(_ error: GraphQLError, sourceName: String) -> GQLError {
        let location = error.locations.first
        var reason = error.message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? error.message
        if let location {
            let prefix = "Syntax Error \(sourceName) (\(location.line):\(location.column)) "
            if reason.hasPrefix(prefix) { reason.removeFirst(prefix.count) }
        }
        let place = location.map { "\(sourceName):\($0.line):\($0.column)" } ?? sourceName
        return GQLError(.invalidArgument, "Syntax error at \(place): \(reason)")
    }
}

extension GQLQuery.OperationType {
    init(_ type: GraphQL.OperationType) {
        switch type {
        case .query: self = .query
        case .mutation: self = .mutation
        case .subscription: self = .subscription
        }
    }
}
