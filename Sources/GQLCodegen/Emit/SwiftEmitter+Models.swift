/// The `GQLObject` models: one struct per object type the configuration's ``GQLCodegen/Configuration/models``
/// names, and per AppSync `@model` type with ``GQLCodegen/Configuration/allModels`` (none unless it opts in),
/// stored as a GQLStore table keyed by its key field and read back column by column in the table's order
/// (`GQLRowDecodable`, the store's fast path), so what GQLSync pulls and receives live goes into the table without a
/// hand-written type.
extension SwiftEmitter {
    /// One model to generate: its schema type, the key field and the fields stored as columns.
    struct Model {
        var type: SchemaType
        var key: String
        var columns: [FieldDefinition]
    }

    /// The models of `schema` and `configuration`, by type name, with a diagnostic for each that cannot be one.
    static func models(
        _ schema: GQLCodegen.Schema, _ configuration: GQLCodegen.Configuration, problems: inout [GQLCodegen.Diagnostic]
    ) -> [Model] {
        let file = schema.file
        var named = configuration.models
        for type in schema.types.values where configuration.allModels && type.isModel && named[type.name] == nil {
            named[type.name] = ""
        }
        var models: [Model] = []
        for (name, configured) in named.sorted(by: { $0.key < $1.key }) {
            guard let type = schema.types[name], type.kind == .object else {
                problems.append(
                    .init(
                        .error, file: file, line: 1, column: 1,
                        "the model \(name) is no object type of the schema"))
                continue
            }
            func fail(_ message: String) {
                problems.append(.init(.error, file: file, line: type.line, column: type.column, message))
            }
            var columns = type.fieldOrder.compactMap { type.fields[$0] }.filter { field in
                field.arguments.isEmpty
                    && schema.types[field.type.name].map { $0.kind == .scalar || $0.kind == .enum } == true
            }
            // The type's own key: AppSync keys a @model without @primaryKey by `id`, and adds `id: ID!` when the
            // SDL leaves it out.
            let key = configured.isEmpty ? type.primaryKey ?? "id" : configured
            if type.isModel, type.primaryKey == nil, key == "id", type.fields["id"] == nil {
                columns.insert(FieldDefinition(name: "id", type: .nonNull(.named("ID")), arguments: []), at: 0)
            }
            guard key != type.primaryKey || type.sortKeyFields.isEmpty else {
                let sortKeys = type.sortKeyFields.joined(separator: ", ")
                fail(
                    "the model \(name)'s @primaryKey has sortKeyFields (\(sortKeys)): a composite key, which a table's one "
                        + "key column cannot hold (rows sharing \(key) would overwrite each other); name a unique field "
                        + "as its key in the config's models, or leave the type out")
                continue
            }
            guard let keyField = columns.first(where: { $0.name == key }) else {
                fail("the model \(name)'s key \(key) is no scalar field of it")
                continue
            }
            let keyType = configuration.swiftType(ofScalar: keyField.type.name)
            guard case .nonNull(.named) = keyField.type, ["String", "Int"].contains(keyType),
                schema.types[keyField.type.name]?.kind == .scalar
            else {
                fail("the model \(name)'s key \(key) must be a non-null String, ID or Int, not \(keyField.type)")
                continue
            }
            models.append(Model(type: type, key: key, columns: columns))
        }
        return models
    }

    /// A model's struct: the columns as properties with the defaults of a new row, `init()`, a memberwise
    /// initializer, the key and table name, and `init(row:)` reading the columns in the table's order.
    func emitModel(_ model: Model, into writer: inout SwiftWriter) {
        let name = modelNames[model.type.name] ?? model.type.name
        let columns = model.columns.map { field in
            (field: field, type: modelType(field.type), defaultValue: modelDefault(field.type))
        }
        writer.line(
            "/// The `\(model.type.name)` model: a row of the GQLStore table \(model.type.name), keyed by \(model.key)."
        )
        writer.block("\(access)struct \(name): GQLObject, GQLRowDecodable, Hashable") { writer in
            for column in columns {
                writer.line(
                    "\(access)var \(Naming.identifier(column.field.name)): \(column.type) = \(column.defaultValue)")
            }
            writer.line()
            writer.line("\(access)static func primaryKey() -> String { \(Naming.rawString(model.key)) }")
            writer.line("\(access)static func tableName() -> String { \(Naming.rawString(model.type.name)) }")
            writer.line()
            writer.line("\(access)init() {}")
            writer.line()
            let parameters = columns.map { column in
                "\(Naming.parameter(column.field.name)): \(column.type)"
                    + (column.field.name == model.key ? "" : " = \(column.defaultValue)")
            }
            writer.block("\(access)init(\(parameters.joined(separator: ", ")))") { writer in
                for column in columns {
                    writer.line("self.\(Naming.identifier(column.field.name)) = \(Naming.argument(column.field.name))")
                }
            }
            writer.line()
            writer.block("\(access)init(row: GQLRow) throws") { writer in
                for column in columns {
                    writer.line(
                        "self.\(Naming.identifier(column.field.name)) = try row[\(Naming.rawString(column.field.name))]"
                    )
                }
            }
        }
    }

    /// A column's Swift type: the field's, with scalars mapped and enums by their generated names.
    func modelType(_ type: TypeReference) -> String {
        let swift = swiftType(type, leaf: leafType)
        // A non-null field of a type without a known empty value is optional, so a new row can be made.
        if type.isNonNull, case .named(let name) = type.nullable, schema.types[name]?.kind != .enum,
            Self.emptyValues[swift] == nil
        {
            return swift + "?"
        }
        return swift
    }

    /// The value of a column in a new row: nil, an empty list, zero, "", false, or an enum's first value.
    func modelDefault(_ type: TypeReference) -> String {
        guard type.isNonNull else { return "nil" }
        guard case .named(let name) = type.nullable else { return "[]" }
        if let enumeration = schema.types[name], enumeration.kind == .enum {
            guard let first = enumeration.enumValues.first else { return ".unknown(\"\")" }
            return "\(leafType(name))(rawValue: \(Naming.rawString(first)))"
        }
        return Self.emptyValues[leafType(name)] ?? "nil"
    }

    /// The empty value of the Swift types scalars map to by default.
    static let emptyValues: [String: String] = [
        "String": "\"\"", "Int": "0", "Int64": "0", "Int32": "0", "Double": "0", "Float": "0", "Bool": "false",
        "GQLValue": ".null",
    ]
}
