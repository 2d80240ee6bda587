import GQLCore
import GraphQL

/// A query or mutation compiled once per cached document, to run straight on ``ModelStore`` without GraphQLSwift's
/// executor: which store call each root field makes, where each argument comes from, and the output fields in
/// selection order.
///
/// Only the AppSync-shaped operations compile: root fields that are `getT(key)`, `createT`, `updateT`, `deleteT`
/// (or `__typename`), each selecting scalar fields of `T`, `__typename` and aliases. Fragments, directives,
/// list or enum fields, field defaults and duplicate root keys make ``compile(_:schema:fields:)`` return `nil`, and
/// the executor runs the operation. At run time ``DevEngine`` still falls back to the executor when a variable is
/// not one ``InputCoercion`` is certain about, before anything is read or written.
///
/// ```swift
/// let plan = OperationPlan.compile(operation, schema: schema, fields: engine.planFields)
/// // query Get($id: ID!) { getObjects(objectId: $id) { objectId text } } → one root field, .get, two outputs
/// ```
struct OperationPlan: Sendable {
    /// One variable the operation declares: the executor coerces every one, used or not.
    struct VariablePlan: Sendable {
        let name: String
        let type: InputCoercion.InputType
        /// The default value's literal, when there is one.
        let defaultValue: InputCoercion.Source?
    }

    /// One argument of a root field, in the field definition's order.
    struct ArgumentPlan: Sendable {
        let name: String
        let type: InputCoercion.InputType
        /// `nil` when the document does not give it (absent).
        let source: InputCoercion.Source?
    }

    /// What a root field does.
    enum Action: Sendable {
        case typename(String)
        case get(RowSource)
        /// `listTs` (or `syncTs` when `sync`).
        case page(ModelStore, sync: Bool)
        case mutate(ModelResolvers.Verb, ModelStore)
    }

    /// One output field of the item a root field returns. A class, so running a plan copies no fields.
    final class OutputField: Sendable {
        let key: String
        /// `"key":` as ``ResponseJSON/key(_:)`` writes it, escaped once when the plan is compiled.
        let keyJSON: [UInt8]
        let node: Field
        let value: Value

        init(key: String, node: Field, value: Value) {
            self.key = key
            self.keyJSON = ResponseJSON.keyBytes(key)
            self.node = node
            self.value = value
        }

        enum Value: Sendable {
            case typename(String)
            /// A column of the model `type`, with its GraphQL scalar (for serialization), and whether it is non-null.
            case column(name: String, type: String, scalar: Scalar, nonNull: Bool)
            /// A list of objects of a connection `type` (`items`), each with these outputs; the list is non-null.
            case objects(name: String, type: String, outputs: [OutputField])
        }
    }

    /// A GraphQL scalar of an output field, with the kind its common values serialize as without a call.
    struct Scalar: Sendable {
        enum Kind: Sendable {
            case string, id, int, float, boolean, awsDateTime, awsJSON, awsTimestamp, other
        }

        let type: GraphQLScalarType
        let kind: Kind

        init(_ type: GraphQLScalarType) {
            self.type = type
            let kinds: [String: Kind] = [
                "String": .string, "ID": .id, "Int": .int, "Float": .float, "Boolean": .boolean,
                "AWSDateTime": .awsDateTime, "AWSJSON": .awsJSON, "AWSTimestamp": .awsTimestamp,
            ]
            self.kind = kinds[type.name] ?? .other
        }
    }

    /// A model's store as a `getT` reads it, with what sizing its item from a row's columns needs, worked out once
    /// per model. A class, so running a plan copies no store.
    final class RowSource: Sendable {
        let store: ModelStore
        /// How each of the model's fields (``ModelDefinition/fields``, the order the store selects them) is sized
        /// for the ``ResponseBudget`` in its common forms.
        let sizes: [ItemSize]

        /// The forms of a column whose item value's budget size is known without making the value.
        enum ItemSize: Sendable {
            /// A non-list field whose item value is the column's text: ASCII text is its byte count plus 2.
            case text
            /// A non-list `Int`, `AWSTimestamp` or `Boolean`: an integer column is 8.
            case integer
            /// A non-list `Float`: an integer or real column is 8.
            case number
            /// Any other (a list): sized from its item value.
            case other
        }

        init(_ store: ModelStore) {
            self.store = store
            sizes = store.model.fields.map { field in
                guard !field.isList else { return .other }
                switch field.scalar {
                case .id, .string, .awsDateTime, .awsJSON, .enumeration: return .text
                case .int, .awsTimestamp, .boolean: return .integer
                case .float: return .number
                }
            }
        }
    }

    /// A `getT` output that is a column of its model, as the row's answer writes it.
    struct ColumnOutput: Sendable {
        /// The output's index in the model's fields (``ModelDefinition/fields``, the order the store selects them);
        /// `nil` for an output that is not a column of the model.
        let index: Int?
        /// Whether a NULL column is written `null` at once: a nullable output of a column.
        let nullable: Bool
        /// The column's form that is written as it stands, decided from the field and the output's scalar.
        let form: Form

        /// The storage class and field kind whose column is copied into the answer without an item value.
        enum Form: Sendable {
            /// Plain ASCII text of an `ID`, `String`, `AWSDateTime` or `AWSJSON` field.
            case text
            /// An integer of an `Int` field within Int32.
            case int32
            /// An integer of an `AWSTimestamp` field.
            case timestamp
            /// An integer of a `Boolean` field (0 is false).
            case boolean
            /// A finite real of a `Float` field.
            case real
            /// None: every value takes the item value's path.
            case none
        }

        init(_ output: OutputField, _ model: ModelDefinition) {
            guard case .column(let name, _, let scalar, let nonNull) = output.value, let index = model.fieldIndex[name]
            else {
                self.index = nil
                nullable = false
                form = .none
                return
            }
            self.index = index
            nullable = !nonNull
            let field = model.fields[index]
            switch (field.scalar, scalar.kind) {
            case _ where field.isList: form = .none
            case (.id, .id), (.string, .string), (.awsDateTime, .awsDateTime), (.awsJSON, .awsJSON): form = .text
            case (.int, .int): form = .int32
            case (.awsTimestamp, .awsTimestamp): form = .timestamp
            case (.boolean, .boolean): form = .boolean
            case (.float, .float): form = .real
            default: form = .none
            }
        }
    }

    /// One root field. A class, so running a plan copies no fields.
    final class RootField: Sendable {
        let key: String
        /// `"key":` as ``ResponseJSON/key(_:)`` writes it, escaped once when the plan is compiled.
        let keyJSON: [UInt8]
        let node: Field
        let action: Action
        let arguments: [ArgumentPlan]
        let outputs: [OutputField]
        /// For a `getT`, each output's column, in the order of ``outputs``. Empty for other actions.
        let columns: [ColumnOutput]

        init(key: String, node: Field, action: Action, arguments: [ArgumentPlan], outputs: [OutputField]) {
            self.key = key
            self.keyJSON = ResponseJSON.keyBytes(key)
            self.node = node
            self.action = action
            self.arguments = arguments
            self.outputs = outputs
            if case .get(let source) = action {
                columns = outputs.map { ColumnOutput($0, source.store.model) }
            } else {
                columns = []
            }
        }

        /// Whether running the field writes (a `createT`, `updateT` or `deleteT`).
        var mutates: Bool {
            if case .mutate = action { true } else { false }
        }
    }

    let variables: [VariablePlan]
    let fields: [RootField]

    /// The plan of `operation`, or `nil` when it is not one of the shapes the plan runs.
    ///
    /// - Parameter fields: the model operations by root field name (``DevEngine``'s table).
    static func compile(_ operation: OperationDefinition, schema: GraphQLSchema, fields actions: [String: Action])
        -> OperationPlan?
    {
        guard operation.directives.isEmpty else { return nil }
        let root: GraphQLObjectType?
        switch operation.operation {
        case .query: root = schema.queryType
        case .mutation: root = schema.mutationType
        case .subscription: return nil
        }
        guard let root, let rootFields = try? root.fields() else { return nil }
        var objects: [String: InputCoercion.InputObject] = [:]
        var variables: [VariablePlan] = []
        for definition in operation.variableDefinitions {
            guard let graphQLType = inputType(definition.type, schema: schema) else { return nil }
            let type = InputCoercion.InputType.of(graphQLType, objects: &objects)
            var defaultValue: InputCoercion.Source?
            if let literal = definition.defaultValue {
                guard let source = InputCoercion.source(literal, type: type) else { return nil }
                defaultValue = source
            }
            variables.append(VariablePlan(name: definition.variable.name.value, type: type, defaultValue: defaultValue))
        }
        var plans: [RootField] = []
        var keys: Set<String> = []
        for selection in operation.selectionSet.selections {
            guard let field = selection as? Field, field.directives.isEmpty else { return nil }
            let key = field.alias?.value ?? field.name.value
            guard keys.insert(key).inserted else { return nil }
            if field.name.value == "__typename" {
                guard field.arguments.isEmpty, field.selectionSet == nil else { return nil }
                plans.append(RootField(key: key, node: field, action: .typename(root.name), arguments: [], outputs: []))
                continue
            }
            guard let action = actions[field.name.value], let definition = rootFields[field.name.value],
                let compiled = compile(field, key: key, action: action, definition: definition, objects: &objects)
            else { return nil }
            plans.append(compiled)
        }
        return plans.isEmpty ? nil : OperationPlan(variables: variables, fields: plans)
    }

    private static func compile(
        _ field: Field, key: String, action: Action, definition: GraphQLField,
        objects: inout [String: InputCoercion.InputObject]
    ) -> RootField? {
        var arguments: [ArgumentPlan] = []
        let given = Dictionary(field.arguments.map { ($0.name.value, $0.value) }, uniquingKeysWith: { a, _ in a })
        guard given.count == field.arguments.count, given.keys.allSatisfy({ definition.args[$0] != nil }) else {
            return nil
        }
        for (name, argument) in definition.args {
            guard argument.defaultValue == nil else { return nil }
            let type = InputCoercion.InputType.of(argument.type, objects: &objects)
            var source: InputCoercion.Source?
            if let literal = given[name] {
                guard let compiled = InputCoercion.source(literal, type: type) else { return nil }
                source = compiled
            }
            arguments.append(ArgumentPlan(name: name, type: type, source: source))
        }
        guard let type = definition.type as? GraphQLObjectType, let selectionSet = field.selectionSet,
            let outputs = outputs(selectionSet, of: type)
        else { return nil }
        return RootField(key: key, node: field, action: action, arguments: arguments, outputs: outputs)
    }

    /// The input type a variable declares (GraphQLSwift's `typeFromAST` is internal).
    private static func inputType(_ ast: any Type, schema: GraphQLSchema) -> (any GraphQLInputType)? {
        if let list = ast as? ListType {
            return inputType(list.type, schema: schema).map { GraphQLList($0) }
        }
        if let nonNull = ast as? NonNullType {
            guard let inner = inputType(nonNull.type, schema: schema) as? any GraphQLNullableType else { return nil }
            return GraphQLNonNull(inner)
        }
        guard let named = ast as? NamedType else { return nil }
        return schema.getType(name: named.name.value) as? any GraphQLInputType
    }

    /// The scalar fields and `__typename`s of `selectionSet` in order, a repeated key once (where it first appears);
    /// in a connection type, also `items` with its own selection.
    private static func outputs(_ selectionSet: SelectionSet, of type: GraphQLObjectType) -> [OutputField]? {
        guard let fields = try? type.fields() else { return nil }
        var outputs: [OutputField] = []
        var keys: Set<String> = []
        for selection in selectionSet.selections {
            guard let field = selection as? Field, field.directives.isEmpty, field.arguments.isEmpty else { return nil }
            let key = field.alias?.value ?? field.name.value
            let name = field.name.value
            let value: OutputField.Value
            if let selectionSet = field.selectionSet {
                // `items: [T]!` of a connection: a non-null list of nullable objects of scalars.
                guard let definition = fields[name],
                    let list = (definition.type as? GraphQLNonNull)?.ofType as? GraphQLList,
                    let element = list.ofType as? GraphQLObjectType,
                    let inner = Self.outputs(selectionSet, of: element),
                    !inner.contains(where: { if case .objects = $0.value { true } else { false } }),
                    !keys.contains(key)
                else { return nil }
                value = .objects(name: name, type: type.name, outputs: inner)
            } else if name == "__typename" {
                value = .typename(type.name)
            } else {
                guard let definition = fields[name] else { return nil }
                let nonNull = definition.type is GraphQLNonNull
                let named = (definition.type as? GraphQLNonNull)?.ofType ?? definition.type
                guard let scalar = named as? GraphQLScalarType else { return nil }
                value = .column(name: name, type: type.name, scalar: Scalar(scalar), nonNull: nonNull)
            }
            // Validation lets a key repeat only for the same field; the executor merges them at the first.
            guard keys.insert(key).inserted else { continue }
            outputs.append(OutputField(key: key, node: field, value: value))
        }
        return outputs
    }
}
