import GraphQL

extension DocumentSet {
    /// Checks a selection set on `parent` and returns what it selects. With `collectOnly`, only the variables it
    /// uses are recorded (a fragment walked again for an operation that spreads it); nothing is reported twice.
    mutating func selections(_ set: SelectionSet, on parent: String, collectOnly: Bool = false) -> Selections {
        var result = Selections(parent: parent)
        var keys: [String: (name: String, loc: Location?)] = [:]
        let reported = errors.count
        for selection in set.selections {
            switch selection {
            case let field as Field:
                guard let ir = self.field(field, on: parent) else { continue }
                if let first = keys[ir.key], first.name != ir.name {
                    error(
                        field.loc,
                        "\(ir.key) answers both \(first.name) (at \(Self.place(first.loc))) and \(ir.name); alias one of them"
                    )
                    continue
                }
                keys[ir.key] = (ir.name, field.loc)
                result.items.append(.field(ir))
            case let inline as InlineFragment:
                let condition = inline.typeCondition?.name.value ?? parent
                guard
                    possible(
                        condition, within: parent, at: inline.typeCondition?.loc ?? inline.loc, "an inline fragment")
                else { continue }
                let conditional = inline.directives.contains { ["include", "skip"].contains($0.name.value) }
                directives(inline.directives)
                result.items.append(
                    .inline(
                        typeCondition: condition, conditional: conditional,
                        selections(inline.selectionSet, on: condition, collectOnly: collectOnly)))
            case let spread as FragmentSpread:
                let name = spread.name.value
                guard let fragment = fragmentDefinitions[name] else {
                    error(spread.name.loc, "unknown fragment \(name)")
                    continue
                }
                let conditional = spread.directives.contains { ["include", "skip"].contains($0.name.value) }
                directives(spread.directives)
                let condition = fragment.typeCondition.name.value
                guard possible(condition, within: parent, at: spread.name.loc, "the fragment \(name)") else { continue }
                result.items.append(.spread(fragment: name, typeCondition: condition, conditional: conditional))
            default:
                continue
            }
        }
        if collectOnly { errors.removeSubrange(reported...) }
        return result
    }

    /// Whether a fragment on `condition` can apply within a selection on `parent`: both must be composite types
    /// that share an object type.
    private mutating func possible(_ condition: String, within parent: String, at loc: Location?, _ what: String)
        -> Bool
    {
        guard let type = schema.types[condition] else {
            error(loc, "unknown type \(condition)")
            return false
        }
        guard type.isComposite else {
            error(loc, "\(what) cannot be on the \(type.kind.rawValue) \(condition)")
            return false
        }
        guard !schema.possible(condition).isDisjoint(with: schema.possible(parent)) else {
            error(loc, "\(what) on \(condition) can never apply within \(parent): no object type is both")
            return false
        }
        return true
    }

    private mutating func field(_ field: Field, on parent: String) -> FieldIR? {
        let name = field.name.value
        let key = field.alias?.value ?? name
        let conditional = field.directives.contains { ["include", "skip"].contains($0.name.value) }
        directives(field.directives)
        if name == "__typename" {
            if field.selectionSet != nil {
                error(field.selectionSet?.loc, "__typename is a String: it takes no selection")
            }
            return FieldIR(
                key: key, name: name, type: .nonNull(.named("String")), conditional: conditional, selections: nil,
                parent: parent, place: Place(field.loc))
        }
        guard let definition = schema.types[parent]?.fields[name] else {
            error(
                field.name.loc,
                "unknown field \(name) on the \(schema.types[parent]?.kind.rawValue ?? "type") \(parent)")
            return nil
        }
        check(field.arguments, against: definition, at: field.name.loc)
        let named = definition.type.name
        let composite = schema.types[named]?.isComposite ?? false
        var selections: Selections?
        switch (composite, field.selectionSet) {
        case (true, let set?):
            selections = self.selections(set, on: named)
        case (true, nil):
            error(field.name.loc, "\(parent).\(name) is a \(definition.type): select its fields (`\(name) { … }`)")
            return nil
        case (false, let set?):
            error(set.loc, "\(parent).\(name) is a \(definition.type), which has no fields to select")
            return nil
        case (false, nil):
            break
        }
        // Compared by the fields-can-merge rule: in name order, input objects' fields too (as graphql-js does).
        var printer = DocumentPrinter(schema: schema)
        printer.sortsFields = true
        let arguments = field.arguments.sorted { $0.name.value < $1.name.value }
            .map { "\($0.name.value): \(printer.print($0.value))" }.joined(separator: ", ")
        return FieldIR(
            key: key, name: name, type: definition.type, conditional: conditional, selections: selections,
            parent: parent, arguments: arguments, place: Place(field.loc))
    }

    // MARK: Arguments and values

    private mutating func check(_ given: [Argument], against field: FieldDefinition, at loc: Location?) {
        var seen: Set<String> = []
        for argument in given {
            let name = argument.name.value
            guard seen.insert(name).inserted else {
                error(argument.name.loc, "the argument \(name) is given twice")
                continue
            }
            guard let definition = field.arguments.first(where: { $0.name == name }) else {
                let known = field.arguments.map(\.name).joined(separator: ", ")
                error(
                    argument.name.loc,
                    "unknown argument \(name) of \(field.name) (it takes: \(known.isEmpty ? "none" : known))")
                continue
            }
            check(argument.value, against: definition.type)
        }
        for definition in field.arguments
        where definition.type.isNonNull && !definition.hasDefault && !seen.contains(definition.name) {
            error(loc, "\(field.name) needs the argument \(definition.name): \(definition.type)")
        }
    }

    /// `@include(if:)` and `@skip(if:)` take a `Boolean!`; other directives' arguments are not checked against
    /// definitions. Their variables count as used either way.
    mutating func directives(_ directives: [Directive]) {
        for directive in directives {
            let condition = ["include", "skip"].contains(directive.name.value)
            for argument in directive.arguments {
                let type: TypeReference? = condition && argument.name.value == "if" ? .nonNull(.named("Boolean")) : nil
                check(argument.value, against: type)
            }
        }
    }

    /// Checks a literal against an input type (or only records its variables when `type` is nil).
    mutating func check(_ value: any Value, against type: TypeReference?) {
        if let variable = value as? Variable {
            // Without a type (an unknown directive's argument) the use is recorded, its type not checked.
            usedVariables.append((variable.name.value, variable.loc, type ?? .named("")))
            return
        }
        guard let type else {
            if let list = value as? ListValue { list.values.forEach { check($0, against: nil) } }
            if let object = value as? ObjectValue { object.fields.forEach { check($0.value, against: nil) } }
            return
        }
        if value is NullValue {
            if type.isNonNull { error(value.loc, "null where a \(type) is required") }
            return
        }
        switch type {
        case .nonNull(let inner):
            check(value, against: inner)
        case .list(let inner):
            if let list = value as? ListValue {
                list.values.forEach { check($0, against: inner) }
            } else {
                check(value, against: inner)
            }
        case .named(let name):
            guard let named = schema.types[name] else { return }
            switch named.kind {
            case .enum:
                guard let enumValue = value as? EnumValue, named.enumValues.contains(enumValue.value) else {
                    error(value.loc, "not a value of the enum \(name)")
                    return
                }
            case .inputObject:
                guard let object = value as? ObjectValue else {
                    error(value.loc, "the input object \(name) is written as { field: value }")
                    return
                }
                for field in object.fields {
                    guard let definition = named.inputFields.first(where: { $0.name == field.name.value }) else {
                        error(field.name.loc, "unknown field \(field.name.value) of the input object \(name)")
                        continue
                    }
                    check(field.value, against: definition.type)
                }
                for definition in named.inputFields
                where definition.type.isNonNull && !definition.hasDefault
                    && !object.fields.contains(where: { $0.name.value == definition.name })
                {
                    error(object.loc, "the input object \(name) needs its field \(definition.name)")
                }
            case .scalar:
                let fits: Bool =
                    switch name {
                    case "Int": value is IntValue
                    case "Float": value is IntValue || value is FloatValue
                    case "String": value is StringValue
                    case "Boolean": value is BooleanValue
                    case "ID": value is StringValue || value is IntValue
                    default: true
                    }
                if !fits { error(value.loc, "not a value of the scalar \(name)") }
            default:
                break
            }
        }
    }
}
