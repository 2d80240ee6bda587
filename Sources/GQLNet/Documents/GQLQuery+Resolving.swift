extension GQLQuery {
    /// The operation `name` with the fragments it spreads, transitively, in order of first use.
    static func resolve(_ name: String, in state: State) throws -> Document {
        guard let operation = state.operations[name], case .operation(let type) = operation.kind else {
            let known = state.operations.keys.sorted()
            let hint = known.isEmpty ? "no operations are loaded" : "loaded: \(known.joined(separator: ", "))"
            throw GQLError(.invalidArgument, "Unknown GraphQL operation \"\(name)\" (\(hint)).", operation: name)
        }
        var used: [Definition] = []
        var seen: Set<String> = []
        // Depth-first over the spreads; `seen` also stops a (spec-invalid) fragment cycle from looping.
        func visit(_ definition: Definition) throws {
            for spread in definition.spreads where !seen.contains(spread.name) {
                guard let fragment = state.fragments[spread.name] else {
                    throw GQLError(
                        .invalidArgument,
                        "Unknown fragment \"\(spread.name)\" used at \(definition.sourceName):\(spread.line):"
                            + "\(spread.column) (in \(definition.name)).",
                        operation: name)
                }
                seen.insert(spread.name)
                used.append(fragment)
                try visit(fragment)
            }
        }
        try visit(operation)
        let text = ([operation] + used).map(\.text).joined(separator: "\n\n")
        return Document(
            name: name, operationType: type, text: text, fragments: used.map(\.name),
            sourceName: operation.sourceName, line: operation.line)
    }
}
