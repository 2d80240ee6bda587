import GQLCore
import GraphQL

/// The input values of a compiled operation (``OperationPlan``): variables and argument literals coerced to their
/// GraphQL input types as GraphQLSwift's executor coerces them, in the ``GQLValue`` form its resolvers see.
///
/// It is deliberately narrow: it answers only where the executor's result is certain and error-free. Anything
/// else — a value the executor would refuse (its error message is the executor's to write), an enum, a field
/// default — is `nil`, and the request runs on the executor instead.
///
/// ```swift
/// InputCoercion.coerce(.int(7), type: .nonNull(.scalar(.id)))   // .value(.string("7"))
/// InputCoercion.coerce(.null, type: .nonNull(.scalar(.id)))     // nil: the executor reports it
/// ```
enum InputCoercion {
    /// A coerced value: `nil` inside when the input is absent (`undefined`).
    enum Coerced: Sendable, Equatable {
        case value(GQLValue?)
    }

    /// An input type as the plan keeps it, read from the schema once when the plan compiles.
    indirect enum InputType: Sendable {
        case nonNull(InputType)
        case list(InputType)
        case scalar(Scalar)
        case object(InputObject)
        /// Enums and `@oneOf` inputs: the executor's to coerce.
        case unsupported
        /// An input field with a default value (the executor fills it in when absent): the executor's to coerce.
        case defaulted

        /// The shape of a GraphQLSwift input type; `objects` holds the input objects read so far (they nest).
        static func of(_ type: any GraphQLType, objects: inout [String: InputObject]) -> InputType {
            if let nonNull = type as? GraphQLNonNull { return .nonNull(of(nonNull.ofType, objects: &objects)) }
            if let list = type as? GraphQLList { return .list(of(list.ofType, objects: &objects)) }
            if let scalar = type as? GraphQLScalarType { return .scalar(Scalar(name: scalar.name)) }
            guard let input = type as? GraphQLInputObjectType, !input.isOneOf else { return .unsupported }
            if let known = objects[input.name] { return .object(known) }
            let object = InputObject(name: input.name)
            objects[input.name] = object
            guard let fields = try? input.fields() else { return .unsupported }
            var shapes: [(name: String, type: InputType)] = []
            for (name, field) in fields {
                shapes.append((name, field.defaultValue == nil ? of(field.type, objects: &objects) : .defaulted))
            }
            object.define(shapes)
            return .object(object)
        }
    }

    /// A scalar input type, by name: read once when the plan compiles, so coercing a value compares no names.
    enum Scalar: Sendable {
        case id, string, int, float, boolean, awsDateTime, awsTimestamp, awsJSON
        /// Any other scalar: the executor's to coerce.
        case other

        init(name: String) {
            switch name {
            case "ID": self = .id
            case "String": self = .string
            case "Int": self = .int
            case "Float": self = .float
            case "Boolean": self = .boolean
            case "AWSDateTime": self = .awsDateTime
            case "AWSTimestamp": self = .awsTimestamp
            case "AWSJSON": self = .awsJSON
            default: self = .other
            }
        }
    }

    /// An input object type's fields in definition order.
    ///
    /// `@unchecked Sendable`: ``define(_:)`` is called once, while the plan that holds the object compiles and
    /// before the plan is shared; afterwards the object is only read.
    final class InputObject: @unchecked Sendable {
        let name: String
        private(set) var fields: [(name: String, type: InputType)] = []
        private(set) var names: Set<String> = []

        init(name: String) {
            self.name = name
        }

        fileprivate func define(_ fields: [(name: String, type: InputType)]) {
            self.fields = fields
            self.names = Set(fields.map(\.name))
        }
    }

    /// Coerces `value` (`nil` when absent) to `type`, or `nil` when the executor would refuse it or the answer is
    /// not certain.
    static func coerce(_ value: GQLValue?, type: InputType) -> Coerced? {
        if case .defaulted = type { return nil }
        if case .nonNull(let inner) = type {
            guard let value, !value.isNull else { return nil }
            return coerce(value, type: inner)
        }
        guard let value else { return .value(nil) }
        if value.isNull { return .value(.null) }
        switch type {
        case .list(let item):
            guard case .array(let elements) = value else {
                // A single value is a list of one.
                guard case .value(let element?) = coerce(value, type: item) else { return nil }
                return .value(.array([element]))
            }
            var coerced: [GQLValue] = []
            coerced.reserveCapacity(elements.count)
            for element in elements {
                guard case .value(let member?) = coerce(element, type: item) else { return nil }
                coerced.append(member)
            }
            return .value(.array(coerced))
        case .object(let object):
            guard case .object(let members) = value, members.keys.allSatisfy(object.names.contains) else { return nil }
            var coerced = GQLValues(minimumCapacity: members.count)
            for (name, fieldType) in object.fields {
                guard case .value(let member) = coerce(members[name], type: fieldType) else { return nil }
                if let member { coerced[name] = member }
            }
            return .value(.object(coerced))
        case .scalar(let scalar):
            return coerceScalar(value, scalar).map { .value($0) }
        case .nonNull, .unsupported, .defaulted:
            return nil
        }
    }

    /// A scalar input as the resolver sees it, for the kinds whose coercion is certain.
    private static func coerceScalar(_ value: GQLValue, _ scalar: Scalar) -> GQLValue? {
        switch (scalar, value) {
        case (.id, .string), (.string, .string), (.boolean, .bool): return value
        case (.id, .int(let i)): return .string(String(i))
        case (.int, .int(let i)) where Int64(Int32.min) <= i && i <= Int64(Int32.max): return value
        case (.float, .int): return value
        case (.float, .double(let d)) where d.isFinite: return value
        // The AWS scalars take any JSON value as it is (GraphQLSwift's default parseValue).
        case (.awsDateTime, .string), (.awsTimestamp, .int), (.awsJSON, .string): return value
        default: return nil
        }
    }

    // MARK: Literals

    /// Where an argument's value comes from: a constant from the document, a variable, or an input object or list
    /// whose parts come from either.
    indirect enum Source: Sendable {
        case constant(GQLValue)
        case variable(String)
        case object([(name: String, source: Source)])
        case list([Source])

        /// The value with `variables` (coerced; absent ones are `undefined`) filled in; `nil` when absent.
        func resolve(_ variables: GQLValues) -> GQLValue? {
            switch self {
            case .constant(let value): return value
            case .variable(let name): return variables[name]
            case .object(let fields):
                var object = GQLValues(minimumCapacity: fields.count)
                for (name, source) in fields {
                    if let value = source.resolve(variables) { object[name] = value }
                }
                return .object(object)
            case .list(let items): return .array(items.map { $0.resolve(variables) ?? .null })
            }
        }
    }

    /// The source of a literal `value` in a position of `type`, as GraphQLSwift's `valueFromAST` reads it; `nil`
    /// for literals it does not handle (enums, custom scalars, field defaults, anything validation would refuse).
    static func source(_ value: any Value, type: InputType) -> Source? {
        if case .nonNull(let inner) = type {
            guard !(value is NullValue) else { return nil }
            return source(value, type: inner)
        }
        if value is NullValue { return .constant(.null) }
        if let variable = value as? Variable { return .variable(variable.name.value) }
        switch type {
        case .list(let item):
            guard let literal = value as? ListValue else { return source(value, type: item).map { .list([$0]) } }
            var items: [Source] = []
            for element in literal.values {
                guard let compiled = source(element, type: item) else { return nil }
                items.append(compiled)
            }
            return .list(items)
        case .object(let object):
            guard let literal = value as? ObjectValue else { return nil }
            let given = Dictionary(literal.fields.map { ($0.name.value, $0.value) }, uniquingKeysWith: { a, _ in a })
            guard given.count == literal.fields.count, given.keys.allSatisfy(object.names.contains) else { return nil }
            var members: [(name: String, source: Source)] = []
            for (name, fieldType) in object.fields {
                if case .defaulted = fieldType { return nil }
                guard let literal = given[name] else { continue }
                guard let member = source(literal, type: fieldType) else { return nil }
                members.append((name, member))
            }
            return .object(members)
        case .scalar(let scalar):
            return scalarSource(value, scalar)
        case .nonNull, .unsupported, .defaulted:
            return nil
        }
    }

    private static func scalarSource(_ value: any Value, _ scalar: Scalar) -> Source? {
        switch (scalar, value) {
        case (.string, let string as StringValue), (.id, let string as StringValue):
            return .constant(.string(string.value))
        case (.id, let int as IntValue):
            return .constant(.string(int.value))
        case (.int, let int as IntValue):
            guard let number = Int32(int.value) else { return nil }
            return .constant(.int(Int64(number)))
        case (.float, let float as FloatValue):
            return finite(Double(float.value))
        case (.float, let int as IntValue):
            return finite(Double(int.value))
        case (.boolean, let bool as BooleanValue):
            return .constant(.bool(bool.value))
        default:
            return nil
        }
    }

    private static func finite(_ number: Double?) -> Source? {
        guard let number, number.isFinite else { return nil }
        return .constant(.double(number))
    }
}
