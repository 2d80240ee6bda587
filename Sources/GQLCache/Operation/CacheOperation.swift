import GQLCore
import GraphQL

/// One operation as the cache uses it: the text sent to the server (with `__typename` added to every selection
/// set below the root), its type, the defaults of its variables, and its selections compiled.
struct CacheOperation: Sendable {
    enum Kind: String, Sendable { case query, mutation, subscription }

    var name: String?
    var kind: Kind
    /// The text to send: the caller's, with ` __typename` after the `{` of each selection set that lacks it.
    var text: String
    var selections: SelectionSetPlan
    /// Variable defaults written in the operation (`$limit: Int = 10`).
    var defaults: GQLValues

    /// The record the operation's root fields are stored in.
    var rootKey: RecordKey {
        switch kind {
        case .query: RecordKey(CacheKey.queryRoot)
        case .mutation: RecordKey(CacheKey.mutationRoot)
        case .subscription: RecordKey(CacheKey.subscriptionRoot)
        }
    }

    /// The caller's variables with the operation's defaults under them.
    func variables(_ given: GQLValues) -> GQLValues {
        defaults.isEmpty ? given : defaults.merging(given) { _, caller in caller }
    }

    /// Compiles `text`, which must hold exactly one operation (and any fragments it uses).
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for a syntax error, no or several operations, an unknown or
    ///   cyclic fragment.
    init(text source: String) throws {
        let document = try Self.parse(source)
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        guard operations.count == 1, let operation = operations.first else {
            throw GQLError(
                .invalidArgument,
                "the cache needs text with exactly one operation; this text has \(operations.count)",
                operation: "cache")
        }
        text = Self.addingTypename(to: source, document: document)
        // The augmented text is compiled, so an answer read from the cache has the fields the server's has.
        let augmented = try Self.parse(text)
        guard let sent = augmented.definitions.compactMap({ $0 as? OperationDefinition }).first else {
            throw GQLError(.invalidArgument, "the operation could not be read back", operation: "cache")
        }
        var fragments: [String: FragmentDefinition] = [:]
        for case let fragment as FragmentDefinition in augmented.definitions {
            fragments[fragment.name.value] = fragment
        }
        name = operation.name?.value
        kind =
            switch operation.operation {
            case .query: .query
            case .mutation: .mutation
            case .subscription: .subscription
            }
        var compiler = Compiler(fragments: fragments)
        selections = try compiler.compile(sent.selectionSet, depth: 0)
        var defaults = GQLValues()
        for definition in sent.variableDefinitions {
            if let value = definition.defaultValue, case .literal(let literal) = try Compiler.value(value) {
                defaults[definition.variable.name.value] = literal
            }
        }
        self.defaults = defaults
    }

    private static func parse(_ text: String) throws -> Document {
        do {
            return try GraphQL.parse(source: Source(body: text, name: "cache"))
        } catch let error as GraphQLError {
            let reason = error.message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? error.message
            throw GQLError(.invalidArgument, "the operation does not parse: \(reason)", operation: "cache")
        }
    }

    /// `text` with ` __typename` inserted after the opening brace of every selection set that is not an
    /// operation's root and has no unaliased `__typename` yet; positions come from the parser's tokens, so braces
    /// inside strings and comments are never touched.
    static func addingTypename(to text: String, document: Document) -> String {
        var offsets: [Int] = []
        func visit(_ set: SelectionSet, root: Bool) {
            let hasTypename = set.selections.contains { selection in
                guard let field = selection as? Field else { return false }
                return field.name.value == "__typename" && field.alias == nil
            }
            if !root && !hasTypename, let brace = set.loc?.startToken, brace.kind == .openingBrace {
                offsets.append(brace.end)
            }
            for selection in set.selections {
                switch selection {
                case let field as Field: if let nested = field.selectionSet { visit(nested, root: false) }
                case let inline as InlineFragment: visit(inline.selectionSet, root: false)
                default: break
                }
            }
        }
        for definition in document.definitions {
            switch definition {
            case let operation as OperationDefinition: visit(operation.selectionSet, root: true)
            case let fragment as FragmentDefinition: visit(fragment.selectionSet, root: false)
            default: break
            }
        }
        var bytes = Array(text.utf8)
        for offset in offsets.sorted(by: >) where offset >= 0 && offset <= bytes.count {
            bytes.insert(contentsOf: Array(" __typename".utf8), at: offset)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Turns AST selection sets into ``SelectionSetPlan``s, replacing each fragment spread by its fragment.
private struct Compiler {
    let fragments: [String: FragmentDefinition]
    /// The fragments being expanded, to refuse a cycle instead of recursing for ever.
    var expanding: Set<String> = []

    /// Deeper selections than this are refused (an answer read back would nest as deep).
    static let maximumDepth = 256

    mutating func compile(_ set: SelectionSet, depth: Int) throws -> SelectionSetPlan {
        guard depth < Self.maximumDepth else {
            throw GQLError(
                .invalidArgument, "the operation nests selections deeper than \(Self.maximumDepth) levels",
                operation: "cache")
        }
        var items: [SelectionItem] = []
        for selection in set.selections {
            switch selection {
            case let field as Field:
                let arguments = try field.arguments.map {
                    ArgumentPlan(name: $0.name.value, value: try Self.value($0.value))
                }
                items.append(
                    .field(
                        FieldPlan(
                            responseKey: field.alias?.value ?? field.name.value, name: field.name.value,
                            arguments: arguments.sorted { $0.name < $1.name },
                            conditions: try Self.conditions(field.directives),
                            selections: try field.selectionSet.map { try compile($0, depth: depth + 1) })))
            case let inline as InlineFragment:
                items.append(
                    .fragment(
                        typeCondition: inline.typeCondition?.name.value,
                        conditions: try Self.conditions(inline.directives),
                        selections: try compile(inline.selectionSet, depth: depth + 1)))
            case let spread as FragmentSpread:
                let name = spread.name.value
                guard let fragment = fragments[name] else {
                    throw GQLError(
                        .invalidArgument, "the operation uses the unknown fragment \(name)", operation: "cache")
                }
                guard !expanding.contains(name) else {
                    throw GQLError(.invalidArgument, "the fragment \(name) spreads itself", operation: "cache")
                }
                expanding.insert(name)
                let selections = try compile(fragment.selectionSet, depth: depth + 1)
                expanding.remove(name)
                items.append(
                    .fragment(
                        typeCondition: fragment.typeCondition.name.value,
                        conditions: try Self.conditions(spread.directives), selections: selections))
            default:
                continue
            }
        }
        return SelectionSetPlan(items: items)
    }

    static func conditions(_ directives: [Directive]) throws -> [Condition] {
        try directives.compactMap { directive in
            let name = directive.name.value
            guard name == "include" || name == "skip" else { return nil }
            guard let argument = directive.arguments.first(where: { $0.name.value == "if" }) else {
                throw GQLError(.invalidArgument, "@\(name) needs an `if` argument", operation: "cache")
            }
            return Condition(include: name == "include", value: try value(argument.value))
        }
    }

    static func value(_ node: Value) throws -> ArgumentValue {
        switch node {
        case let variable as Variable: return .variable(variable.name.value)
        case let int as IntValue:
            if let number = Int64(int.value) { return .literal(.int(number)) }
            return .literal(.double(Double(int.value) ?? 0))
        case let float as FloatValue: return .literal(.double(Double(float.value) ?? 0))
        case let string as StringValue: return .literal(.string(string.value))
        case let boolean as BooleanValue: return .literal(.bool(boolean.value))
        case is NullValue: return .literal(.null)
        case let enumeration as EnumValue: return .literal(.string(enumeration.value))
        case let list as ListValue:
            let elements = try list.values.map(value)
            if elements.allSatisfy({ if case .literal = $0 { true } else { false } }) {
                return .literal(.array(elements.map { if case .literal(let v) = $0 { v } else { .null } }))
            }
            return .list(elements)
        case let object as ObjectValue:
            var members: [String: ArgumentValue] = [:]
            for field in object.fields { members[field.name.value] = try value(field.value) }
            if members.values.allSatisfy({ if case .literal = $0 { true } else { false } }) {
                return .literal(.object(members.mapValues { if case .literal(let v) = $0 { v } else { .null } }))
            }
            return .object(members)
        default:
            throw GQLError(
                .invalidArgument, "the operation has an argument value the cache cannot read", operation: "cache")
        }
    }
}
