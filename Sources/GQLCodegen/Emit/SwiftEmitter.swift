import GraphQL

/// Writes the Swift of a checked document set: one file per document, one for the schema's enums and input
/// objects the documents use. Same input, same bytes.
struct SwiftEmitter {
    let set: DocumentSet
    let schema: GQLCodegen.Schema
    let configuration: GQLCodegen.Configuration
    /// `public ` or nothing.
    let access: String
    /// Swift names of the schema's enums and input objects the documents use, by GraphQL name.
    var schemaTypeNames: [String: String] = [:]
    /// Every top-level name generated: nested types must not shadow them.
    var globalNames: Set<String> = []
    var problems: [GQLCodegen.Diagnostic] = []
    /// The `GQLObject` models to generate, by type name.
    var models: [Model] = []
    /// Swift names of the models, by GraphQL name.
    var modelNames: [String: String] = [:]

    static let schemaTypesFile = "SchemaTypes.graphql"

    init(set: DocumentSet, schema: GQLCodegen.Schema, configuration: GQLCodegen.Configuration) {
        self.set = set
        self.schema = schema
        self.configuration = configuration
        access = configuration.access == "internal" ? "" : "public "
        var used: Set<String> = []
        func use(_ name: String) {
            guard let type = schema.types[name], type.kind == .enum || type.kind == .inputObject,
                used.insert(name).inserted
            else { return }
            for field in type.inputFields { use(field.type.name) }
        }
        func walk(_ selections: Selections) {
            for item in selections.items {
                switch item {
                case .field(let field):
                    use(field.type.name)
                    if let inner = field.selections { walk(inner) }
                case .inline(_, _, let inner): walk(inner)
                case .spread: break
                }
            }
        }
        for operation in set.operations {
            operation.variables.forEach { use($0.type.name) }
            walk(operation.selections)
        }
        set.fragments.values.forEach { walk($0.selections) }
        models = Self.models(schema, configuration, problems: &problems)
        for model in models { model.columns.forEach { use($0.type.name) } }
        globalNames = Set(set.operations.map { Naming.upperFirst($0.name) + DocumentSet.suffix($0.kind) })
            .union(set.fragments.keys).union(configuration.namespace.map { [$0] } ?? [])
        for name in used.sorted() {
            let swiftName = Naming.unique(Naming.reservedTypes.contains(name) ? name + "_" : name, in: &globalNames)
            schemaTypeNames[name] = swiftName
        }
        for model in models {
            let name = model.type.name
            modelNames[name] = Naming.unique(Naming.reservedTypes.contains(name) ? name + "_" : name, in: &globalNames)
        }
    }

    /// The files by name.
    mutating func files() throws -> [String: String] {
        var files: [String: String] = [:]
        var byFile: [String: (operations: [OperationIR], fragments: [FragmentIR])] = [:]
        for operation in set.operations { byFile[operation.file, default: ([], [])].operations.append(operation) }
        for fragment in set.fragments.values.sorted(by: { $0.name < $1.name }) {
            byFile[fragment.file, default: ([], [])].fragments.append(fragment)
        }
        for (file, contents) in byFile {
            var writer = header(source: file)
            if let namespace = configuration.namespace { writer.open("extension \(namespace)") }
            for (index, operation) in contents.operations.enumerated() {
                if index > 0 { writer.line() }
                emit(operation, into: &writer)
            }
            for fragment in contents.fragments {
                if !contents.operations.isEmpty || fragment.name != contents.fragments.first?.name { writer.line() }
                var taken = globalNames
                emitSelectionType(
                    fragment.name, fragment.selections, possible: schema.possible(fragment.typeCondition),
                    taken: &taken, into: &writer)
            }
            if configuration.namespace != nil { writer.close() }
            files[fileName(for: file)] = writer.text
        }
        if !schemaTypeNames.isEmpty || !models.isEmpty || configuration.namespace != nil {
            var writer = header(source: "the schema", store: !models.isEmpty)
            if let namespace = configuration.namespace {
                writer.line("/// The types generated from this schema's documents.")
                writer.open("\(access)enum \(namespace)")
            }
            for (index, name) in schemaTypeNames.keys.sorted().enumerated() {
                guard let type = schema.types[name] else { continue }
                if index > 0 { writer.line() }
                if type.kind == .enum { emitEnum(type, into: &writer) } else { emitInputObject(type, into: &writer) }
            }
            for (index, model) in models.enumerated() {
                if index > 0 || !schemaTypeNames.isEmpty { writer.line() }
                emitModel(model, into: &writer)
            }
            if configuration.namespace != nil { writer.close() }
            files[fileName(for: Self.schemaTypesFile)] = writer.text
        }
        guard problems.isEmpty else { throw GQLCodegen.Failure(problems) }
        return files
    }

    func fileName(for document: String) -> String {
        GQLCodegen.fileName(for: document, namespace: configuration.namespace)
    }

    private func header(source: String, store: Bool = false) -> SwiftWriter {
        var writer = SwiftWriter()
        writer.line(GQLCodegen.Output.header(source: source).dropLast().description)
        writer.line()
        writer.line("import GQLNet")
        if store { writer.line("import GQLStore") }
        writer.line()
        return writer
    }

    // MARK: Operations

    private mutating func emit(_ operation: OperationIR, into writer: inout SwiftWriter) {
        let typeName = Naming.upperFirst(operation.name) + DocumentSet.suffix(operation.kind)
        let conformance = "GQLTyped" + DocumentSet.suffix(operation.kind)
        writer.block("\(access)struct \(typeName): \(conformance)") { writer in
            writer.line("\(access)static let operationName = \(Naming.rawString(operation.name))")
            writer.line("\(access)static let document = \(Naming.rawString(operation.text))")
            writer.line("\(access)var variables: Variables")
            writer.line()
            let parameters = operation.variables.map { variable in
                let type = inputType(variable.type, nullableWrapper: false)
                return "\(Naming.parameter(variable.name)): \(type)\(variable.type.isNonNull ? "" : " = nil")"
            }
            let labels = operation.variables.map { "\(Naming.label($0.name)): \(Naming.argument($0.name))" }
            writer.block("\(access)init(\(parameters.joined(separator: ", ")))") { writer in
                writer.line("variables = Variables(\(labels.joined(separator: ", ")))")
            }
            writer.line()
            writer.block("\(access)struct Variables: GQLVariables") { writer in
                for variable in operation.variables {
                    writer.line(
                        "\(access)var \(Naming.identifier(variable.name)): \(inputType(variable.type, nullableWrapper: false))"
                    )
                }
                let pairs = operation.variables.map { "\"\($0.name)\": \(Naming.identifier($0.name))" }
                writer.line(
                    "\(access)var gqlValue: GQLValue { .input([\(pairs.isEmpty ? ":" : pairs.joined(separator: ", "))]) }"
                )
            }
            writer.line()
            var taken = globalNames
            emitSelectionType(
                "Data", operation.selections, possible: schema.possible(operation.selections.parent),
                taken: &taken, into: &writer)
        }
    }

    // MARK: Schema types

    private func emitEnum(_ type: SchemaType, into writer: inout SwiftWriter) {
        var taken: Set<String> = ["unknown", "init", "rawValue", "gqlValues", "self", "Type", "Protocol"]
        var cases: [(raw: String, swift: String)] = []
        let camel = type.enumValues.map(Naming.lowerCamel)
        for (index, value) in type.enumValues.enumerated() {
            // Two values that read alike in camelCase (`ACTIVE`, `active`) keep their own spelling.
            let clash = camel.enumerated().contains { $0.offset != index && $0.element == camel[index] }
            cases.append((value, Naming.unique(clash ? value : camel[index], in: &taken)))
        }
        let name = schemaTypeNames[type.name] ?? type.name
        // One table of the cases' schema names (GQLEnumValues), read both ways: no switch repeating every case.
        writer.block("\(access)enum \(name): GQLEnum") { writer in
            for entry in cases { writer.line("case \(Naming.identifier(entry.swift))") }
            writer.line("case unknown(String)")
            writer.line()
            let pairs = cases.map { ".\(Naming.identifier($0.swift)): \(Naming.rawString($0.raw))" }
            writer.line(
                "\(access)static let gqlValues: GQLEnumValues<Self> = [\(pairs.isEmpty ? ":" : pairs.joined(separator: ", "))]"
            )
            writer.line(
                "\(access)var rawValue: String { if case .unknown(let value) = self { value } else { Self.gqlValues.name(of: self) } }"
            )
        }
    }

    private func emitInputObject(_ type: SchemaType, into writer: inout SwiftWriter) {
        let name = schemaTypeNames[type.name] ?? type.name
        writer.block("\(access)struct \(name): GQLInputObject") { writer in
            for field in type.inputFields {
                writer.line(
                    "\(access)var \(Naming.identifier(field.name)): \(inputType(field.type, nullableWrapper: true))")
            }
            writer.line()
            let parameters = type.inputFields.map { field in
                "\(Naming.parameter(field.name)): \(inputType(field.type, nullableWrapper: true))\(field.type.isNonNull ? "" : " = .absent")"
            }
            writer.block("\(access)init(\(parameters.joined(separator: ", ")))") { writer in
                for field in type.inputFields {
                    writer.line("self.\(Naming.identifier(field.name)) = \(Naming.argument(field.name))")
                }
            }
            let pairs = type.inputFields.map { "\"\($0.name)\": \(Naming.identifier($0.name))" }
            writer.line(
                "\(access)var gqlValue: GQLValue { .input([\(pairs.isEmpty ? ":" : pairs.joined(separator: ", "))]) }")
        }
    }

    /// The Swift type of an input: nullable at the top is `GQLNullable` in input objects (absent, null or a
    /// value), an optional in variables (nil: absent, so the document's default applies).
    func inputType(_ type: TypeReference, nullableWrapper: Bool) -> String {
        let inner = swiftType(type.nullable, leaf: leafType)
        guard !type.isNonNull else { return swiftType(type, leaf: leafType) }
        if nullableWrapper { return "GQLNullable<\(String(inner.dropLast()))>" }
        return inner
    }

    /// The Swift type of a scalar or enum.
    func leafType(_ name: String) -> String {
        if let enumName = schemaTypeNames[name] { return enumName }
        return configuration.swiftType(ofScalar: name)
    }

    /// Lists and optionals around the named type's Swift type.
    func swiftType(_ type: TypeReference, leaf: (String) -> String) -> String {
        switch type {
        case .nonNull(.named(let name)): leaf(name)
        case .nonNull(.list(let inner)): "[\(swiftType(inner, leaf: leaf))]"
        case .nonNull(.nonNull(let inner)): swiftType(.nonNull(inner), leaf: leaf)
        case .named(let name): leaf(name) + "?"
        case .list(let inner): "[\(swiftType(inner, leaf: leaf))]?"
        }
    }
}
