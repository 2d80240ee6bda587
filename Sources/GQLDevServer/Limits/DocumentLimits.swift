import GQLCore
import GraphQL

/// Checks a parsed document against the ``GQLDevServer/Limits`` before GraphQLSwift validates or executes it:
/// value and selection depth, selections and aliases per operation (fragments expanded), and the cost of an
/// operation with its variables.
///
/// Every walk is bounded: recursion follows the document's nesting, which ``DocumentScanner`` bounded before
/// parsing, and fragment spreads, which add a level each and stop at ``GQLDevServer/Limits/maxDepth``. What a
/// fragment contributes is computed once, so fragments that spread others many times cost no more than their text.
///
/// ```swift
/// let limits = DocumentLimits(document, limits: GQLDevServer.Limits(), pagedFields: ["listObjects"])
/// try limits.checkDocument()                                   // depth, values, selections, aliases
/// let cost = limits.cost(of: operation, variables: ["n": 10])  // list limits × nested selections
/// ```
struct DocumentLimits {
    let limits: GQLDevServer.Limits
    /// The root fields that return a page of items, with a `limit` argument.
    let pagedFields: Set<String>
    let fragments: [String: FragmentDefinition]
    let operations: [OperationDefinition]

    /// The default page size, and the largest, of list and sync queries.
    static let defaultPage = 100
    static let largestPage = 1000

    init(_ document: Document, limits: GQLDevServer.Limits, pagedFields: Set<String>) {
        self.limits = limits
        self.pagedFields = pagedFields
        var fragments: [String: FragmentDefinition] = [:]
        var operations: [OperationDefinition] = []
        for definition in document.definitions {
            if let fragment = definition as? FragmentDefinition {
                fragments[fragment.name.value] = fragments[fragment.name.value] ?? fragment
            } else if let operation = definition as? OperationDefinition {
                operations.append(operation)
            }
        }
        self.fragments = fragments
        self.operations = operations
    }

    // MARK: The document

    /// What an operation or fragment adds up to, fragments expanded.
    private struct Summary {
        var depth = 0
        var selections = 0
        var aliases = 0
    }

    /// Checks every value and variable type, then each operation's depth, selections and aliases.
    func checkDocument() throws(LimitExceeded) {
        for operation in operations {
            for variable in operation.variableDefinitions {
                try checkType(variable.type, depth: 0, at: variable)
                if let value = variable.defaultValue { try checkValue(value, depth: 0) }
                try checkDirectives(variable.directives)
            }
            try checkDirectives(operation.directives)
            try checkValues(in: operation.selectionSet)
        }
        for fragment in fragments.values {
            try checkDirectives(fragment.directives)
            try checkValues(in: fragment.selectionSet)
        }
        var memo: [String: Summary] = [:]
        var visiting: Set<String> = []
        for operation in operations {
            let summary = try summarize(operation.selectionSet, level: 1, memo: &memo, visiting: &visiting)
            if summary.selections > limits.maxSelections {
                throw LimitExceeded(
                    .selections,
                    "The operation selects \(summary.selections) fields (fragments expanded); "
                        + "the limit is \(limits.maxSelections).",
                    limit: limits.maxSelections)
            }
            if summary.aliases > limits.maxAliases {
                throw LimitExceeded(
                    .aliases,
                    "The operation has \(summary.aliases) aliases (fragments expanded); the limit is \(limits.maxAliases).",
                    limit: limits.maxAliases)
            }
        }
    }

    private func checkValues(in selectionSet: SelectionSet) throws(LimitExceeded) {
        for selection in selectionSet.selections {
            switch selection {
            case let field as Field:
                for argument in field.arguments { try checkValue(argument.value, depth: 0) }
                try checkDirectives(field.directives)
                if let inner = field.selectionSet { try checkValues(in: inner) }
            case let spread as FragmentSpread:
                try checkDirectives(spread.directives)
            case let inline as InlineFragment:
                try checkDirectives(inline.directives)
                try checkValues(in: inline.selectionSet)
            default:
                break
            }
        }
    }

    private func checkDirectives(_ directives: [Directive]) throws(LimitExceeded) {
        for directive in directives {
            for argument in directive.arguments { try checkValue(argument.value, depth: 0) }
        }
    }

    private func checkValue(_ value: any Value, depth: Int) throws(LimitExceeded) {
        if let list = value as? ListValue {
            try deeper(depth + 1, node: list)
            for element in list.values { try checkValue(element, depth: depth + 1) }
        } else if let object = value as? ObjectValue {
            try deeper(depth + 1, node: object)
            for field in object.fields { try checkValue(field.value, depth: depth + 1) }
        }
    }

    private func checkType(_ type: any Type, depth: Int, at node: any Node) throws(LimitExceeded) {
        if let list = type as? ListType {
            try deeper(depth + 1, node: node)
            try checkType(list.type, depth: depth + 1, at: node)
        } else if let nonNull = type as? NonNullType {
            try checkType(nonNull.type, depth: depth, at: node)
        }
    }

    private func deeper(_ depth: Int, node: any Node) throws(LimitExceeded) {
        guard depth > limits.maxValueDepth else { return }
        throw LimitExceeded(
            .valueDepth, "A value nests lists or objects more than \(limits.maxValueDepth) deep.",
            limit: limits.maxValueDepth)
    }

    /// The summary of a selection set entered at `level` (1 for an operation's own).
    private func summarize(
        _ selectionSet: SelectionSet, level: Int, memo: inout [String: Summary], visiting: inout Set<String>
    ) throws(LimitExceeded) -> Summary {
        guard level <= limits.maxDepth else {
            throw LimitExceeded(
                .depth, "The operation nests selections more than \(limits.maxDepth) deep.", limit: limits.maxDepth)
        }
        var summary = Summary(depth: 1)
        func add(_ inner: Summary) {
            summary.depth = max(summary.depth, 1 + inner.depth)
            summary.selections = Self.sum(summary.selections, inner.selections)
            summary.aliases = Self.sum(summary.aliases, inner.aliases)
        }
        for selection in selectionSet.selections {
            switch selection {
            case let field as Field:
                var inner = Summary()
                if let selectionSet = field.selectionSet {
                    inner = try summarize(selectionSet, level: level + 1, memo: &memo, visiting: &visiting)
                }
                inner.selections = Self.sum(inner.selections, 1)
                if field.alias != nil { inner.aliases = Self.sum(inner.aliases, 1) }
                summary.depth = max(summary.depth, 1 + inner.depth)
                summary.selections = Self.sum(summary.selections, inner.selections)
                summary.aliases = Self.sum(summary.aliases, inner.aliases)
            case let inline as InlineFragment:
                add(try summarize(inline.selectionSet, level: level + 1, memo: &memo, visiting: &visiting))
            case let spread as FragmentSpread:
                let name = spread.name.value
                if let known = memo[name] {
                    guard level + known.depth <= limits.maxDepth else {
                        throw LimitExceeded(
                            .depth, "The operation nests selections more than \(limits.maxDepth) deep.",
                            limit: limits.maxDepth)
                    }
                    add(known)
                } else if let fragment = fragments[name], !visiting.contains(name) {
                    // A cycle is left to validation, which names it.
                    visiting.insert(name)
                    let inner = try summarize(fragment.selectionSet, level: level + 1, memo: &memo, visiting: &visiting)
                    visiting.remove(name)
                    memo[name] = inner
                    add(inner)
                }
            default:
                break
            }
        }
        return summary
    }

    // MARK: Requests

    /// Refuses variables whose JSON values nest deeper than ``GQLDevServer/Limits/maxValueDepth``.
    func checkVariables(_ variables: GQLValues) throws(LimitExceeded) {
        try Self.checkVariables(variables, maxValueDepth: limits.maxValueDepth)
    }

    /// ``checkVariables(_:)`` with the limit alone, for a caller holding these limits in a class (a cached
    /// document): calling the method there copies every member of the limits first.
    static func checkVariables(_ variables: GQLValues, maxValueDepth: Int) throws(LimitExceeded) {
        for (_, value) in variables where depth(of: value) > maxValueDepth {
            throw LimitExceeded(
                .valueDepth, "A variable nests lists or objects more than \(maxValueDepth) deep.",
                limit: maxValueDepth)
        }
    }

    private static func depth(of value: GQLValue) -> Int {
        switch value {
        case .array(let elements): 1 + (elements.lazy.map(depth).max() ?? 0)
        case .object(let members): 1 + (members.values.lazy.map(depth).max() ?? 0)
        default: 0
        }
    }

    /// The cost of `operation` with `variables`: each field costs 1 times the page sizes of the lists it is in.
    func cost(of operation: OperationDefinition, variables: GQLValues) -> Int {
        var memo: [String: Int] = [:]
        var visiting: Set<String> = []
        let defaults = Dictionary(
            operation.variableDefinitions.map { ($0.variable.name.value, $0.defaultValue) },
            uniquingKeysWith: { a, _ in a })
        return cost(
            operation.selectionSet, root: true, variables: variables, defaults: defaults, memo: &memo,
            visiting: &visiting)
    }

    private func cost(
        _ selectionSet: SelectionSet, root: Bool, variables: GQLValues, defaults: [String: (any Value)?],
        memo: inout [String: Int], visiting: inout Set<String>
    ) -> Int {
        var total = 0
        for selection in selectionSet.selections {
            switch selection {
            case let field as Field:
                var inner = 0
                if let selectionSet = field.selectionSet {
                    inner = cost(
                        selectionSet, root: false, variables: variables, defaults: defaults, memo: &memo,
                        visiting: &visiting)
                }
                let page = root && pagedFields.contains(field.name.value) ? pageSize(field, variables, defaults) : 1
                total = Self.sum(total, Self.sum(1, Self.product(page, inner)))
            case let inline as InlineFragment:
                total = Self.sum(
                    total,
                    cost(
                        inline.selectionSet, root: root, variables: variables, defaults: defaults, memo: &memo,
                        visiting: &visiting))
            case let spread as FragmentSpread:
                let name = spread.name.value
                if let known = memo[name], !root {
                    total = Self.sum(total, known)
                } else if let fragment = fragments[name], !visiting.contains(name) {
                    visiting.insert(name)
                    let inner = cost(
                        fragment.selectionSet, root: root, variables: variables, defaults: defaults, memo: &memo,
                        visiting: &visiting)
                    visiting.remove(name)
                    if !root { memo[name] = inner }
                    total = Self.sum(total, inner)
                }
            default:
                break
            }
        }
        return total
    }

    /// The page size a list or sync field asks for: its `limit` (clamped as the resolver clamps it), 100 without
    /// one, 1,000 for a variable that is not given.
    private func pageSize(_ field: Field, _ variables: GQLValues, _ defaults: [String: (any Value)?]) -> Int {
        guard let argument = field.arguments.first(where: { $0.name.value == "limit" }) else {
            return Self.defaultPage
        }
        var literal: (any Value)? = argument.value
        if let variable = argument.value as? Variable {
            let name = variable.name.value
            if let given = variables[name] {
                guard let number = given.intValue else { return given.isNull ? Self.defaultPage : 1 }
                return Self.clampPage(number)
            }
            guard let fallback = defaults[name] ?? nil else { return Self.largestPage }
            literal = fallback
        }
        guard let int = literal as? IntValue else { return literal is NullValue ? Self.defaultPage : 1 }
        return Int64(int.value).map(Self.clampPage) ?? Self.largestPage
    }

    private static func clampPage(_ value: Int64) -> Int { Int(min(max(value, 1), Int64(largestPage))) }

    /// Sums and products that stop at `Int.max / 4` instead of overflowing.
    static func sum(_ a: Int, _ b: Int) -> Int { min(a + b, Int.max / 4) }
    static func product(_ a: Int, _ b: Int) -> Int {
        let (result, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? Int.max / 4 : min(result, Int.max / 4)
    }
}
