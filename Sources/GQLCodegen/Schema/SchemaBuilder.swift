import GQLCore
import GraphQL

/// Collects a schema's definitions from an SDL document: types, extensions and root types, with a diagnostic for
/// each duplicate (a warning when the first definition can stand for both, an error when not).
struct SchemaBuilder {
    let file: String
    var types: [String: SchemaType] = [:]
    var roots: [OperationType: String] = [:]
    var diagnostics: [GQLCodegen.Diagnostic] = []
    /// Where each type was defined, for the duplicate messages.
    private var places: [String: (line: Int, column: Int)] = [:]

    init(file: String) {
        self.file = file
        for scalar in ["ID", "String", "Int", "Float", "Boolean"] {
            types[scalar] = SchemaType(name: scalar, kind: .scalar)
        }
    }

    mutating func read(_ document: GraphQL.Document) {
        for definition in document.definitions {
            switch definition {
            case let object as ObjectTypeDefinition:
                add(SchemaType(name: object.name.value, kind: .object), at: object.name)
                addFields(object.fields, interfaces: object.interfaces, to: object.name.value)
                markModel(object)
            case let extended as TypeExtensionDefinition:
                extend(extended.definition.name) {
                    $0.addFields(extended.definition.fields, interfaces: extended.definition.interfaces, to: $1)
                }
            case let interface as InterfaceTypeDefinition:
                add(SchemaType(name: interface.name.value, kind: .interface), at: interface.name)
                addFields(interface.fields, interfaces: interface.interfaces, to: interface.name.value)
            case let extended as InterfaceExtensionDefinition:
                extend(extended.definition.name) {
                    $0.addFields(extended.definition.fields, interfaces: extended.definition.interfaces, to: $1)
                }
            case let union as UnionTypeDefinition:
                add(SchemaType(name: union.name.value, kind: .union), at: union.name)
                types[union.name.value]?.members += union.types.map(\.name.value)
            case let extended as UnionExtensionDefinition:
                extend(extended.definition.name) {
                    $0.types[$1]?.members += extended.definition.types.map(\.name.value)
                }
            case let enumeration as EnumTypeDefinition:
                add(SchemaType(name: enumeration.name.value, kind: .enum), at: enumeration.name)
                addValues(enumeration.values, to: enumeration.name.value)
            case let extended as EnumExtensionDefinition:
                extend(extended.definition.name) { $0.addValues(extended.definition.values, to: $1) }
            case let input as InputObjectTypeDefinition:
                add(SchemaType(name: input.name.value, kind: .inputObject), at: input.name)
                addInputFields(input.fields, to: input.name.value)
            case let extended as InputObjectExtensionDefinition:
                extend(extended.definition.name) { $0.addInputFields(extended.definition.fields, to: $1) }
            case let scalar as ScalarTypeDefinition:
                if types[scalar.name.value]?.kind != .scalar || places[scalar.name.value] != nil {
                    add(SchemaType(name: scalar.name.value, kind: .scalar), at: scalar.name)
                }
            case let schema as SchemaDefinition:
                for root in schema.operationTypes { roots[root.operation] = root.type.name.value }
            case let extended as SchemaExtensionDefinition:
                for root in extended.definition.operationTypes { roots[root.operation] = root.type.name.value }
            case is DirectiveDefinition, is ScalarExtensionDefinition:
                break
            default:
                note(.error, definition.loc, "a schema holds type definitions only, not \(definition.kind)")
            }
        }
        checkReferences()
    }

    private mutating func add(_ type: SchemaType, at name: Name) {
        if let first = places[type.name] {
            note(
                .error, name.loc,
                "the type \(type.name) is defined twice (first at \(file):\(first.line):\(first.column))")
            return
        }
        let at = place(name.loc)
        places[type.name] = at
        var type = type
        (type.line, type.column) = at
        types[type.name] = type
    }

    /// Notes AppSync's `@model` on an object type, and the field its `@primaryKey` marks.
    private mutating func markModel(_ object: ObjectTypeDefinition) {
        guard object.directives.contains(where: { $0.name.value == "model" }) else { return }
        types[object.name.value]?.isModel = true
        let keys = object.fields.filter { $0.directives.contains { $0.name.value == "primaryKey" } }
        types[object.name.value]?.primaryKey = keys.first?.name.value
        let arguments = keys.first?.directives.first { $0.name.value == "primaryKey" }?.arguments ?? []
        for argument in arguments where argument.name.value == "sortKeyFields" {
            let values = (argument.value as? ListValue)?.values ?? [argument.value]
            types[object.name.value]?.sortKeyFields = values.compactMap { ($0 as? StringValue)?.value }
        }
        if keys.count > 1 {
            note(
                .error, keys[1].name.loc,
                "\(object.name.value): a second @primaryKey; a model's table has one key column")
        }
    }

    private mutating func extend(_ name: Name, _ body: (inout SchemaBuilder, String) -> Void) {
        guard types[name.value] != nil else {
            note(.error, name.loc, "extend \(name.value): no such type is defined before it")
            return
        }
        body(&self, name.value)
    }

    private mutating func addFields(_ fields: [GraphQL.FieldDefinition], interfaces: [NamedType], to owner: String) {
        types[owner]?.interfaces += interfaces.map(\.name.value)
        for field in fields {
            let definition = FieldDefinition(
                name: field.name.value, type: TypeReference(field.type),
                arguments: field.arguments.map {
                    InputDefinition(
                        name: $0.name.value, type: TypeReference($0.type), hasDefault: $0.defaultValue != nil)
                })
            if let first = types[owner]?.fields[field.name.value] {
                if first.type == definition.type {
                    note(
                        .warning, field.name.loc,
                        "\(owner).\(field.name.value) is defined twice; the first definition is kept")
                } else {
                    note(
                        .error, field.name.loc,
                        "\(owner).\(field.name.value) is defined twice with different types (\(first.type) and \(definition.type))"
                    )
                }
                continue
            }
            types[owner]?.fields[field.name.value] = definition
            types[owner]?.fieldOrder.append(field.name.value)
        }
    }

    private mutating func addValues(_ values: [EnumValueDefinition], to owner: String) {
        for value in values {
            if types[owner]?.enumValues.contains(value.name.value) == true {
                note(.warning, value.name.loc, "\(owner).\(value.name.value) is defined twice; it is generated once")
                continue
            }
            types[owner]?.enumValues.append(value.name.value)
        }
    }

    private mutating func addInputFields(_ fields: [InputValueDefinition], to owner: String) {
        for field in fields {
            if types[owner]?.inputFields.contains(where: { $0.name == field.name.value }) == true {
                note(
                    .warning, field.name.loc,
                    "\(owner).\(field.name.value) is defined twice; the first definition is kept")
                continue
            }
            types[owner]?.inputFields.append(
                InputDefinition(
                    name: field.name.value, type: TypeReference(field.type), hasDefault: field.defaultValue != nil))
        }
    }

    /// Every type a field, argument, member or interface names must exist, with the right kind.
    private mutating func checkReferences() {
        for type in types.values.sorted(by: { $0.name < $1.name }) {
            let at = places[type.name] ?? (1, 1)
            func require(_ name: String, _ what: String, _ allowed: (SchemaType) -> Bool) {
                guard let found = types[name] else {
                    diagnostics.append(
                        .init(
                            .error, file: file, line: at.line, column: at.column,
                            "\(type.name): \(what) names the type \(name), which is defined nowhere"))
                    return
                }
                if !allowed(found) {
                    diagnostics.append(
                        .init(
                            .error, file: file, line: at.line, column: at.column,
                            "\(type.name): \(what) cannot be the \(found.kind.rawValue) \(name)"))
                }
            }
            for field in type.fields.values {
                require(field.type.name, "the field \(field.name)") { !($0.kind == .inputObject) }
                for argument in field.arguments {
                    require(argument.type.name, "the argument \(field.name)(\(argument.name):)") { $0.isInput }
                }
            }
            for field in type.inputFields { require(field.type.name, "the input field \(field.name)") { $0.isInput } }
            for member in type.members { require(member, "a member") { $0.kind == .object } }
            for interface in type.interfaces { require(interface, "an interface") { $0.kind == .interface } }
        }
        if types[roots[.query] ?? "Query"] == nil {
            diagnostics.append(.init(.error, file: file, line: 1, column: 1, "the schema has no query type"))
        }
    }

    private func place(_ loc: Location?) -> (line: Int, column: Int) {
        (loc?.startToken.line ?? 1, loc?.startToken.column ?? 1)
    }

    private mutating func note(_ severity: GQLCodegen.Diagnostic.Severity, _ loc: Location?, _ message: String) {
        let at = place(loc)
        diagnostics.append(.init(severity, file: file, line: at.line, column: at.column, message))
    }
}

extension GQLCodegen.Diagnostic {
    /// A parser's error, at the place it names.
    init(syntax error: GraphQLError, file: String) {
        let location = error.locations.first
        self.init(.error, file: file, line: location?.line ?? 1, column: location?.column ?? 1, error.message)
    }

    /// An error at a node's place.
    init(_ severity: Severity = .error, _ loc: Location?, _ message: String) {
        self.init(
            severity, file: loc?.source.name ?? "", line: loc?.startToken.line ?? 1,
            column: loc?.startToken.column ?? 1, message)
    }
}
