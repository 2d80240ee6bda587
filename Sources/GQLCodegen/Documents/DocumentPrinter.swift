import GQLCore
import GraphQL

/// Prints operations and fragments in one compact canonical form, the text the generated types send: the same
/// document always gives the same bytes, whatever its spacing and comments. Every selection set on an interface
/// or a union gains `__typename`, which the generated type cases decode on.
struct DocumentPrinter {
    let schema: GQLCodegen.Schema
    /// Whether input objects' fields are written in name order (as the fields-can-merge rule compares arguments)
    /// rather than as written.
    var sortsFields = false
    private var out = ""

    init(schema: GQLCodegen.Schema) { self.schema = schema }

    /// One value as text.
    mutating func print(_ value: any Value) -> String {
        out = ""
        write(value)
        return out
    }

    mutating func print(_ operation: OperationDefinition) -> String {
        out = operation.operation.rawValue
        if let name = operation.name { out += " " + name.value }
        if !operation.variableDefinitions.isEmpty {
            out += "("
            for (index, variable) in operation.variableDefinitions.enumerated() {
                if index > 0 { out += ", " }
                out += "$\(variable.variable.name.value): \(TypeReference(variable.type))"
                if let value = variable.defaultValue {
                    out += " = "
                    write(value)
                }
                directives(variable.directives)
            }
            out += ")"
        }
        directives(operation.directives)
        out += " "
        write(operation.selectionSet, on: schema.root(operation.operation) ?? "")
        return out
    }

    mutating func print(_ fragment: FragmentDefinition) -> String {
        out = "fragment \(fragment.name.value) on \(fragment.typeCondition.name.value)"
        directives(fragment.directives)
        out += " "
        write(fragment.selectionSet, on: fragment.typeCondition.name.value)
        return out
    }

    private mutating func write(_ set: SelectionSet, on parent: String, typename: Bool = true) {
        out += "{"
        let abstract = typename && (schema.types[parent]?.isAbstract ?? false)
        if abstract
            && !set.selections.contains(where: {
                ($0 as? Field).map { $0.alias == nil && $0.name.value == "__typename" } ?? false
            })
        {
            out += " __typename"
        }
        for selection in set.selections {
            out += " "
            switch selection {
            case let field as Field:
                if let alias = field.alias { out += alias.value + ": " }
                out += field.name.value
                arguments(field.arguments)
                directives(field.directives)
                if let inner = field.selectionSet {
                    out += " "
                    write(inner, on: schema.types[parent]?.fields[field.name.value]?.type.name ?? "")
                }
            case let inline as InlineFragment:
                out += "..."
                if let condition = inline.typeCondition { out += " on " + condition.name.value }
                directives(inline.directives)
                out += " "
                // The enclosing selection has __typename already.
                write(inline.selectionSet, on: inline.typeCondition?.name.value ?? parent, typename: false)
            case let spread as FragmentSpread:
                out += "..." + spread.name.value
                directives(spread.directives)
            default:
                break
            }
        }
        out += " }"
    }

    private mutating func arguments(_ arguments: [Argument]) {
        guard !arguments.isEmpty else { return }
        out += "("
        for (index, argument) in arguments.enumerated() {
            if index > 0 { out += ", " }
            out += argument.name.value + ": "
            write(argument.value)
        }
        out += ")"
    }

    private mutating func directives(_ directives: [Directive]) {
        for directive in directives {
            out += " @" + directive.name.value
            arguments(directive.arguments)
        }
    }

    private mutating func write(_ value: any Value) {
        switch value {
        case let variable as Variable: out += "$" + variable.name.value
        case let int as IntValue: out += int.value
        case let float as FloatValue: out += float.value
        // JSON's string escapes are GraphQL's; block strings become plain ones.
        case let string as StringValue: JSONWriter.quote(string.value, into: &out)
        case let bool as BooleanValue: out += bool.value ? "true" : "false"
        case is NullValue: out += "null"
        case let enumValue as EnumValue: out += enumValue.value
        case let list as ListValue:
            out += "["
            for (index, element) in list.values.enumerated() {
                if index > 0 { out += ", " }
                write(element)
            }
            out += "]"
        case let object as ObjectValue:
            out += "{"
            let fields = sortsFields ? object.fields.sorted { $0.name.value < $1.name.value } : object.fields
            for (index, field) in fields.enumerated() {
                out += index > 0 ? ", " : ""
                out += field.name.value + ": "
                write(field.value)
            }
            out += "}"
        default:
            break
        }
    }
}
