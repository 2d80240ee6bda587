import GQLCore
import GraphQL

/// Every operation and fragment of a run's documents, checked against the schema: syntax, names used twice,
/// unknown fields, types and fragments, wrong arguments, fragments on impossible types, fragment cycles,
/// undefined and unused variables. All errors are collected, then thrown together in file order.
struct DocumentSet {
    var operations: [OperationIR] = []
    var fragments: [String: FragmentIR] = [:]
    var warnings: [GQLCodegen.Diagnostic] = []

    let schema: GQLCodegen.Schema
    var errors: [GQLCodegen.Diagnostic] = []
    /// The AST of each fragment, by name.
    var fragmentDefinitions: [String: FragmentDefinition] = [:]
    /// Variables used in each selection walked (fragments' own are folded into the operations that spread them).
    var usedVariables: [(name: String, loc: Location?, type: TypeReference)] = []
    /// The variables of the operation being walked (nil while walking a fragment: its variables are checked in
    /// each operation that spreads it).
    var declaredVariables: [String: TypeReference]?

    init(documents: [GQLCodegen.Document], schema: GQLCodegen.Schema, configuration: GQLCodegen.Configuration) throws {
        self.schema = schema
        var operationDefinitions: [(OperationDefinition, String)] = []
        var names: [String: Location?] = [:]
        for document in documents.sorted(by: { $0.name < $1.name }) {
            let parsed: GraphQL.Document
            do {
                try NestingGuard.check(document.text, file: document.name)
                parsed = try GraphQL.parse(source: Source(body: document.text, name: document.name))
            } catch let failure as GQLCodegen.Failure {
                errors += failure.diagnostics
                continue
            } catch let error as GraphQLError {
                errors.append(.init(syntax: error, file: document.name))
                continue
            }
            for definition in parsed.definitions {
                switch definition {
                case let operation as OperationDefinition:
                    guard let name = operation.name else {
                        error(operation.loc, "an operation needs a name: its Swift type is named after it")
                        continue
                    }
                    let typeName = name.value + Self.suffix(operation.operation)
                    if let first = names[typeName] {
                        error(name.loc, "the name \(typeName) is used twice (first at \(Self.place(first)))")
                        continue
                    }
                    names[typeName] = name.loc
                    operationDefinitions.append((operation, document.name))
                case let fragment as FragmentDefinition:
                    if let first = names[fragment.name.value] {
                        error(
                            fragment.name.loc,
                            "the name \(fragment.name.value) is used twice (first at \(Self.place(first)))")
                        continue
                    }
                    names[fragment.name.value] = fragment.name.loc
                    fragmentDefinitions[fragment.name.value] = fragment
                default:
                    error(definition.loc, "a document holds operations and fragments only, not \(definition.kind)")
                }
            }
        }
        for (name, loc) in names.sorted(by: { $0.key < $1.key }) {
            if let type = schema.types[name], type.kind == .enum || type.kind == .inputObject {
                error(
                    loc, "the name \(name) is used twice: the schema's \(type.kind.rawValue) \(name) is generated too")
            }
        }
        checkCycles()
        if errors.isEmpty {
            for (name, definition) in fragmentDefinitions.sorted(by: { $0.key < $1.key }) {
                if let fragment = self.fragment(definition) { fragments[name] = fragment }
            }
            for (definition, file) in operationDefinitions {
                if let operation = operation(definition, file: file) { operations.append(operation) }
            }
            if errors.isEmpty { checkMerges() }
        }
        guard errors.isEmpty else {
            throw GQLCodegen.Failure(errors.sorted { ($0.file, $0.line, $0.column) < ($1.file, $1.line, $1.column) })
        }
    }

    static func suffix(_ kind: OperationType) -> String {
        switch kind {
        case .query: "Query"
        case .mutation: "Mutation"
        case .subscription: "Subscription"
        }
    }

    static func place(_ loc: Location?) -> String {
        "\(loc?.source.name ?? ""):\(loc?.startToken.line ?? 1):\(loc?.startToken.column ?? 1)"
    }

    mutating func error(_ loc: Location?, _ message: String) {
        errors.append(.init(.error, loc, message))
    }

    // MARK: Fragments

    /// Fragments that spread themselves, directly or through others, cannot be generated (nor sent).
    private mutating func checkCycles() {
        var state: [String: Bool] = [:]  // false: being visited; true: done
        func visit(_ name: String, _ path: [String]) {
            guard let definition = fragmentDefinitions[name] else { return }
            state[name] = false
            for (spread, loc) in Self.spreads(in: definition.selectionSet) {
                if state[spread] == false {
                    let cycle = (path + [name, spread]).drop { $0 != spread }
                    error(loc, "the fragment \(spread) spreads itself: \(cycle.joined(separator: " → "))")
                } else if state[spread] == nil {
                    visit(spread, path + [name])
                }
            }
            state[name] = true
        }
        for name in fragmentDefinitions.keys.sorted() where state[name] == nil { visit(name, []) }
    }

    /// The fragment spreads of a selection set, nested ones included, in document order.
    static func spreads(in set: SelectionSet) -> [(String, Location?)] {
        var found: [(String, Location?)] = []
        for selection in set.selections {
            switch selection {
            case let field as Field: if let inner = field.selectionSet { found += spreads(in: inner) }
            case let inline as InlineFragment: found += spreads(in: inline.selectionSet)
            case let spread as FragmentSpread: found.append((spread.name.value, spread.name.loc))
            default: break
            }
        }
        return found
    }

    /// The fragments `set` uses, transitively, in order of first use.
    func uses(_ set: SelectionSet) -> [String] {
        var order: [String] = []
        var seen: Set<String> = []
        func walk(_ set: SelectionSet) {
            for (name, _) in Self.spreads(in: set) where !seen.contains(name) {
                seen.insert(name)
                order.append(name)
                if let definition = fragmentDefinitions[name] { walk(definition.selectionSet) }
            }
        }
        walk(set)
        return order
    }

    private mutating func fragment(_ definition: FragmentDefinition) -> FragmentIR? {
        let condition = definition.typeCondition.name.value
        guard let type = schema.types[condition], type.isComposite else {
            let kind = schema.types[condition].map { "the \($0.kind.rawValue) \(condition)" }
            error(
                definition.typeCondition.loc,
                kind.map { "a fragment cannot be on \($0)" } ?? "unknown type \(condition)")
            return nil
        }
        declaredVariables = nil
        let selections = self.selections(definition.selectionSet, on: condition)
        var printer = DocumentPrinter(schema: schema)
        return FragmentIR(
            name: definition.name.value, typeCondition: condition, file: definition.loc?.source.name ?? "",
            selections: selections, text: printer.print(definition), uses: uses(definition.selectionSet))
    }

    // MARK: Operations

    private mutating func operation(_ definition: OperationDefinition, file: String) -> OperationIR? {
        guard let name = definition.name?.value else { return nil }
        guard let root = schema.root(definition.operation) else {
            error(definition.loc, "the schema has no \(definition.operation.rawValue) type")
            return nil
        }
        var variables: [VariableIR] = []
        var declared: [String: TypeReference] = [:]
        for variable in definition.variableDefinitions {
            let type = TypeReference(variable.type)
            let variableName = variable.variable.name.value
            if declared[variableName] != nil {
                error(variable.variable.loc, "the variable $\(variableName) is declared twice")
                continue
            }
            guard let named = schema.types[type.name], named.isInput else {
                error(
                    variable.type.loc,
                    schema.types[type.name] == nil
                        ? "unknown type \(type.name)"
                        : "the variable $\(variableName) cannot be of the output type \(type.name)")
                continue
            }
            if let defaultValue = variable.defaultValue { check(defaultValue, against: type.nullable) }
            declared[variableName] = type
            variables.append(VariableIR(name: variableName, type: type))
        }
        declaredVariables = declared
        usedVariables = []
        let selections = self.selections(definition.selectionSet, on: root)
        // The variables the operation's fragments use are the operation's to declare.
        for fragmentName in uses(definition.selectionSet) {
            guard let fragment = fragmentDefinitions[fragmentName] else { continue }
            _ = self.selections(fragment.selectionSet, on: fragment.typeCondition.name.value, collectOnly: true)
        }
        var used: Set<String> = []
        for usage in usedVariables {
            used.insert(usage.name)
            guard let type = declared[usage.name] else {
                error(usage.loc, "the variable $\(usage.name) is not declared by the operation \(name)")
                continue
            }
            if !usage.type.name.isEmpty && type.name != usage.type.name {
                error(usage.loc, "the variable $\(usage.name) is a \(type) where a \(usage.type) is expected")
            }
        }
        for variable in definition.variableDefinitions where !used.contains(variable.variable.name.value) {
            error(variable.variable.loc, "the variable $\(variable.variable.name.value) is never used")
        }
        var printer = DocumentPrinter(schema: schema)
        var text = printer.print(definition)
        for fragmentName in uses(definition.selectionSet) {
            if let fragment = fragments[fragmentName] { text += " " + fragment.text }
        }
        return OperationIR(
            name: name, kind: definition.operation, file: file, variables: variables,
            selections: selections, text: text)
    }
}
