import GQLCore
import GraphQL

/// Reads the input SDL: `type X @model { … }` declarations, enums, and declarations of the AWS scalars.
///
/// Everything else (interfaces, unions, inputs, non-model object types, unknown scalars, fields of object
/// types) is an error that names the type, the field and the line.
struct ModelParser {
    /// The default schema when no SDL is given.
    static let defaultSDL = """
        type Objects @model {
          objectId: ID!
          text: String
          number: Int
          double: Float
          boolean: Boolean
          createdAt: String
          updatedAt: String
        }
        """

    /// What the SDL declares.
    struct Result: Sendable {
        var models: [ModelDefinition]
        /// Enum names with their values, in declaration order.
        var enums: [(name: String, values: [String])]
    }

    private static let reservedTypeNames: Set<String> = ["Query", "Mutation", "Subscription"]
    private static let ignoredDirectiveNames: Set<String> = [
        "auth", "aws_api_key", "aws_iam", "aws_cognito_user_pools",
        "aws_oidc", "aws_lambda", "searchable", "versioned", "default",
    ]

    /// Reads `sdl`; its brackets may nest at most `maxNesting` deep (checked before GraphQLSwift's recursive
    /// parser sees the text).
    static func parse(_ sdl: String, maxNesting: Int = 80) throws -> Result {
        do throws(LimitExceeded) {
            try DocumentScanner.check(sdl, maxTokens: .max, maxNesting: maxNesting)
        } catch {
            throw GQLError(.invalidArgument, "the schema does not parse: \(error.message)")
        }
        let document: Document
        do {
            document = try GraphQL.parse(source: Source(body: sdl, name: "schema"))
        } catch let error as GraphQLError {
            let line = error.locations.first.map { " (line \($0.line))" } ?? ""
            throw GQLError(.invalidArgument, "the schema does not parse\(line): \(error.message)")
        }
        var enums: [(name: String, values: [String])] = []
        var objects: [ObjectTypeDefinition] = []
        for definition in document.definitions {
            switch definition {
            case let object as ObjectTypeDefinition:
                objects.append(object)
            case let enumeration as EnumTypeDefinition:
                enums.append((enumeration.name.value, enumeration.values.map(\.name.value)))
            case let scalar as ScalarTypeDefinition:
                guard ModelDefinition.Scalar.awsScalars.contains(scalar.name.value) else {
                    throw GQLError(
                        .invalidArgument,
                        "scalar \(scalar.name.value) (line \(line(scalar.loc))) is not supported; "
                            + "the scalars are ID, String, Int, Float, Boolean, AWSDateTime, AWSTimestamp, AWSJSON")
                }
            case is DirectiveDefinition:
                continue
            default:
                throw GQLError(
                    .invalidArgument,
                    "line \(line(definition.loc)): only `type X @model { … }`, enums and the AWS scalars are supported")
            }
        }
        let enumNames = Set(enums.map(\.name))
        var models: [ModelDefinition] = []
        var seen: Set<String> = []
        var byFoldedName: [String: ModelDefinition] = [:]
        for object in objects {
            let model = try model(object, enums: enumNames)
            guard seen.insert(model.name).inserted else {
                throw GQLError(.invalidArgument, "type \(model.name) (line \(model.line)) is declared twice")
            }
            // SQLite's table names ignore case: Note and note would share one table.
            if let other = byFoldedName[model.name.lowercased()] {
                throw GQLError(
                    .invalidArgument,
                    "types \(other.name) (line \(other.line)) and \(model.name) (line \(model.line)) differ only in "
                        + "case; each type is stored in a table, and table names ignore case")
            }
            byFoldedName[model.name.lowercased()] = model
            models.append(model)
        }
        guard !models.isEmpty else {
            throw GQLError(.invalidArgument, "the schema declares no `type X @model { … }`")
        }
        let plurals = Dictionary(grouping: models, by: \.plural)
        if let clash = plurals.first(where: { $0.value.count > 1 }) {
            throw GQLError(
                .invalidArgument,
                "types \(clash.value.map(\.name).joined(separator: " and ")) have the same plural \(clash.key)")
        }
        return Result(models: models, enums: enums)
    }

    private static func model(_ object: ObjectTypeDefinition, enums: Set<String>) throws -> ModelDefinition {
        let name = object.name.value
        let typeLine = line(object.loc)
        guard object.directives.contains(where: { $0.name.value == "model" }) else {
            throw GQLError(
                .invalidArgument,
                "type \(name) (line \(typeLine)) has no @model directive; only @model types are supported")
        }
        guard !reservedTypeNames.contains(name), !name.hasPrefix("Model"), !name.hasPrefix("__") else {
            throw GQLError(.invalidArgument, "type \(name) (line \(typeLine)): the name is reserved")
        }
        guard !name.lowercased().hasPrefix("sqlite_") else {
            throw GQLError(
                .invalidArgument,
                "type \(name) (line \(typeLine)): names beginning with sqlite_ are reserved for the database's own tables"
            )
        }
        guard object.interfaces.isEmpty else {
            throw GQLError(.invalidArgument, "type \(name) (line \(typeLine)): interfaces are not supported")
        }
        var fields: [ModelDefinition.Field] = []
        var primaryKey: String?
        for definition in object.fields {
            let fieldName = definition.name.value
            let fieldLine = line(definition.loc)
            let place = "\(name).\(fieldName) (line \(fieldLine))"
            guard !ModelDefinition.reservedNames.contains(fieldName) else {
                throw GQLError(.invalidArgument, "\(place): \(fieldName) is kept by the server; do not declare it")
            }
            guard definition.arguments.isEmpty else {
                throw GQLError(.invalidArgument, "\(place): fields with arguments are not supported")
            }
            guard !fields.contains(where: { $0.name == fieldName }) else {
                throw GQLError(.invalidArgument, "\(place): the field is declared twice")
            }
            var field = try fieldType(definition.type, enums: enums, place: place)
            field.name = fieldName
            field.line = fieldLine
            for directive in definition.directives {
                let directiveName = directive.name.value
                if directiveName == "primaryKey" {
                    guard primaryKey == nil else {
                        throw GQLError(
                            .invalidArgument, "\(place): a second @primaryKey; composite keys are not supported")
                    }
                    let sortKeys = directive.arguments.first { $0.name.value == "sortKeyFields" }?.value
                    guard sortKeys == nil || (sortKeys as? ListValue)?.values.isEmpty == true else {
                        throw GQLError(
                            .invalidArgument, "\(place): @primaryKey(sortKeyFields:); composite keys are not supported")
                    }
                    primaryKey = fieldName
                } else if !ignoredDirectiveNames.contains(directiveName) {
                    throw GQLError(.invalidArgument, "\(place): the directive @\(directiveName) is not supported")
                }
            }
            fields.append(field)
        }
        // AppSync's key without @primaryKey is `id`; a type without one is keyed by its first ID! field here.
        let key =
            primaryKey
            ?? fields.first(where: { $0.name == "id" })?.name
            ?? fields.first(where: { $0.scalar == .id && !$0.isList && $0.nonNull })?.name
        guard let key, let keyField = fields.first(where: { $0.name == key }) else {
            throw GQLError(
                .invalidArgument,
                "type \(name) (line \(typeLine)) has no key: add a field `id: ID!` or mark one @primaryKey")
        }
        let keyTypes: [ModelDefinition.Scalar] = [.id, .string, .int]
        guard keyField.nonNull, !keyField.isList, keyTypes.contains(keyField.scalar) else {
            throw GQLError(
                .invalidArgument,
                "\(name).\(key) (line \(keyField.line)): a key must be ID!, String! or Int!, not \(keyField.typeText)")
        }
        let declared = Set(fields.map(\.name))
        for (i, field) in fields.enumerated() where field.name == "createdAt" || field.name == "updatedAt" {
            guard field.scalar == .string || field.scalar == .awsDateTime, !field.isList else {
                throw GQLError(
                    .invalidArgument,
                    "\(name).\(field.name) (line \(field.line)) is kept by the server and must be String or AWSDateTime"
                )
            }
            fields[i].isServerKept = true
        }
        let ownerField = try ownerRule(object, place: "type \(name) (line \(typeLine))")
        if let ownerField {
            if let declaredOwner = fields.first(where: { $0.name == ownerField }) {
                guard !declaredOwner.isList, declaredOwner.scalar == .string || declaredOwner.scalar == .id,
                    declaredOwner.name != key
                else {
                    throw GQLError(
                        .invalidArgument,
                        "\(name).\(ownerField) (line \(declaredOwner.line)) holds the owner (@auth): it must be a "
                            + "String or ID that is not the key")
                }
            } else {
                // AppSync adds the owner field to the type when the SDL does not declare it.
                fields.append(
                    ModelDefinition.Field(
                        name: ownerField, scalar: .string, isList: false, nonNull: false, elementNonNull: false,
                        isServerKept: false, line: 0))
            }
        }
        fields += ModelDefinition.serverFields(declared: declared)
        // SQLite's column names ignore case: title and Title would be one column.
        var byFoldedName: [String: ModelDefinition.Field] = [:]
        for field in fields {
            if let other = byFoldedName[field.name.lowercased()] {
                let place = { (field: ModelDefinition.Field) in
                    field.line > 0
                        ? "\(name).\(field.name) (line \(field.line))" : "\(name).\(field.name), kept by the server,"
                }
                throw GQLError(
                    .invalidArgument,
                    "\(place(other)) and \(place(field)) differ only in case; each field is stored in a column, and "
                        + "column names ignore case")
            }
            byFoldedName[field.name.lowercased()] = field
        }
        return ModelDefinition(name: name, key: key, fields: fields, line: typeLine, ownerField: ownerField)
    }

    /// The owner field of a type's `@auth(rules: [{ allow: owner, ownerField: "…" }])`: `owner` unless the rule
    /// names another; `nil` without an owner rule. Other rules (public, private, groups) are not evaluated: a type
    /// with an owner rule is its owners' alone.
    private static func ownerRule(_ object: ObjectTypeDefinition, place: String) throws -> String? {
        for directive in object.directives where directive.name.value == "auth" {
            for argument in directive.arguments where argument.name.value == "rules" {
                let rules: [any Value] =
                    (argument.value as? ListValue)?.values ?? [argument.value]
                for case let rule as ObjectValue in rules {
                    var allow: String?
                    var field: String?
                    for entry in rule.fields {
                        let text = (entry.value as? EnumValue)?.value ?? (entry.value as? StringValue)?.value
                        switch entry.name.value {
                        case "allow": allow = text
                        case "ownerField": field = text
                        default: continue
                        }
                    }
                    guard allow == "owner" else { continue }
                    let owner = field ?? "owner"
                    guard !owner.isEmpty, !ModelDefinition.reservedNames.contains(owner) else {
                        throw GQLError(.invalidArgument, "\(place): @auth's ownerField \(owner) cannot hold the owner")
                    }
                    return owner
                }
            }
        }
        return nil
    }

    /// The type of a field: a scalar or enum, non-null or not, or a list of them.
    private static func fieldType(_ type: any Node, enums: Set<String>, place: String) throws
        -> ModelDefinition.Field
    {
        var nonNull = false
        var inner: any Node = type
        if let wrapper = inner as? NonNullType {
            nonNull = true
            inner = wrapper.type
        }
        var isList = false
        var elementNonNull = false
        if let list = inner as? ListType {
            isList = true
            inner = list.type
            if let wrapper = inner as? NonNullType {
                elementNonNull = true
                inner = wrapper.type
            }
        }
        guard let named = inner as? NamedType else {
            throw GQLError(.invalidArgument, "\(place): lists of lists are not supported")
        }
        let typeName = named.name.value
        let scalar: ModelDefinition.Scalar
        if let known = ModelDefinition.Scalar.byName[typeName] {
            scalar = known
        } else if enums.contains(typeName) {
            scalar = .enumeration(typeName)
        } else {
            throw GQLError(
                .invalidArgument,
                "\(place): the type \(typeName) is not supported; use ID, String, Int, Float, Boolean, "
                    + "AWSDateTime, AWSTimestamp, AWSJSON, an enum, or a list of them")
        }
        return ModelDefinition.Field(
            name: "", scalar: scalar, isList: isList, nonNull: nonNull, elementNonNull: elementNonNull,
            isServerKept: false, line: 0)
    }

    static func line(_ location: Location?) -> Int { location?.startToken.line ?? 0 }
}
