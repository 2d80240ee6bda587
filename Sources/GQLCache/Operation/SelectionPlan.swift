import GQLCore

/// An operation's selection sets compiled from the GraphQL AST into values the cache walks: fields with their
/// arguments (literals or variables), `@skip` / `@include` conditions, and fragments, spreads already replaced
/// by their fragment's selections. Sendable, unlike the AST, so one compiled operation serves every task.
struct SelectionSetPlan: Sendable, Hashable {
    /// The items and what is worked out from them, in one object: a set is passed and copied for every object a
    /// read or a write walks, and a copy then costs one retain rather than one per array.
    private let shape: Shape

    private final class Shape: Sendable {
        let items: [SelectionItem]
        let plainFields: [CollectedField]?
        let hasDistinctStorageKeys: Bool
        let leafNames: [String]?

        init(_ items: [SelectionItem]) {
            self.items = items
            plainFields = SelectionSetPlan.plainFields(of: items)
            hasDistinctStorageKeys = SelectionSetPlan.hasDistinctStorageKeys(plainFields)
            leafNames = SelectionSetPlan.leafNames(plainFields)
        }
    }

    var items: [SelectionItem] { shape.items }
    /// The collected fields when the set is fields only, each under its own response key and without `@skip` /
    /// `@include`: what ``TypeMatcher/collect(_:typename:isRoot:variables:)`` returns for every object, worked out
    /// once here rather than for each object an answer holds. `nil` for any other set.
    var plainFields: [CollectedField]? { shape.plainFields }
    /// Whether the set is ``plainFields`` without arguments, each field named once: every object's fields then
    /// have distinct storage keys (their names), which a new record can take without looking each one up.
    var hasDistinctStorageKeys: Bool { shape.hasDistinctStorageKeys }
    /// The field names when the set is ``plainFields`` of leaves only, none aliased or with arguments: a record
    /// holding exactly these members, in this order, with plain values, is then its own answer (shared, not
    /// rebuilt). `nil` for any other set.
    var leafNames: [String]? { shape.leafNames }

    init(items: [SelectionItem]) {
        shape = Shape(items)
    }

    private static func leafNames(_ plainFields: [CollectedField]?) -> [String]? {
        guard let plainFields, hasDistinctStorageKeys(plainFields),
            plainFields.allSatisfy({ $0.field.selections == nil && $0.responseKey == $0.field.name })
        else { return nil }
        return plainFields.map(\.field.name)
    }

    private static func hasDistinctStorageKeys(_ plainFields: [CollectedField]?) -> Bool {
        guard let plainFields else { return false }
        var names: Set<String> = []
        return plainFields.allSatisfy { $0.field.arguments.isEmpty && names.insert($0.field.name).inserted }
    }

    private static func plainFields(of items: [SelectionItem]) -> [CollectedField]? {
        var fields: [CollectedField] = []
        var keys: Set<String> = []
        for item in items {
            guard case .field(let field) = item, field.conditions.isEmpty, keys.insert(field.responseKey).inserted
            else { return nil }
            fields.append(CollectedField(responseKey: field.responseKey, field: field))
        }
        return fields
    }

    static func == (left: Self, right: Self) -> Bool { left.shape === right.shape || left.items == right.items }

    func hash(into hasher: inout Hasher) { hasher.combine(items) }
}

indirect enum SelectionItem: Sendable, Hashable {
    case field(FieldPlan)
    /// An inline fragment or a spread fragment: its selections apply when `typeCondition` matches the object.
    case fragment(typeCondition: String?, conditions: [Condition], selections: SelectionSetPlan)
}

/// One field of a selection set. A class of constants rather than a struct: the normalizer and the reader pass
/// each field of each object they walk, and a reference costs one retain where the struct's five members cost
/// one each.
final class FieldPlan: Sendable, Hashable {
    /// The name the answer uses: the alias, or the field's name.
    let responseKey: String
    let name: String
    /// The arguments in name order.
    let arguments: [ArgumentPlan]
    let conditions: [Condition]
    /// `nil` for a leaf (a scalar or a list of scalars).
    let selections: SelectionSetPlan?

    init(
        responseKey: String, name: String, arguments: [ArgumentPlan], conditions: [Condition],
        selections: SelectionSetPlan?
    ) {
        self.responseKey = responseKey
        self.name = name
        self.arguments = arguments
        self.conditions = conditions
        self.selections = selections
    }

    /// The same field with other selections.
    func with(selections: SelectionSetPlan?) -> FieldPlan {
        FieldPlan(
            responseKey: responseKey, name: name, arguments: arguments, conditions: conditions, selections: selections)
    }

    static func == (left: FieldPlan, right: FieldPlan) -> Bool {
        left === right
            || (left.responseKey == right.responseKey && left.name == right.name && left.arguments == right.arguments
                && left.conditions == right.conditions && left.selections == right.selections)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(responseKey)
        hasher.combine(name)
        hasher.combine(arguments)
        hasher.combine(conditions)
        hasher.combine(selections)
    }

    /// The key the field's value has in its record: the name, then the arguments given (variables resolved,
    /// names in order) as JSON in parentheses — `user({"id":"1"})`. Arguments whose variable was not given are
    /// left out, as the server leaves them out.
    func storageKey(_ variables: GQLValues) -> String {
        guard !arguments.isEmpty else { return name }
        var resolved = GQLValues()
        for argument in arguments {
            if let value = argument.value.resolve(variables) { resolved[argument.name] = value }
        }
        guard !resolved.isEmpty else { return name }
        return name + "(" + CanonicalJSON.text(.object(resolved)) + ")"
    }
}

struct ArgumentPlan: Sendable, Hashable {
    var name: String
    var value: ArgumentValue
}

/// An argument's value as written: a literal, a variable, or a list or object holding variables.
indirect enum ArgumentValue: Sendable, Hashable {
    case literal(GQLValue)
    case variable(String)
    case list([ArgumentValue])
    case object([String: ArgumentValue])

    /// The value with `variables` put in; `nil` when it is a variable that was not given.
    func resolve(_ variables: GQLValues) -> GQLValue? {
        switch self {
        case .literal(let value): return value
        case .variable(let name): return variables[name]
        case .list(let elements): return .array(elements.map { $0.resolve(variables) ?? .null })
        case .object(let members):
            var object = GQLValues()
            for (name, member) in members {
                if let value = member.resolve(variables) { object[name] = value }
            }
            return .object(object)
        }
    }
}

/// `@include(if:)` or `@skip(if:)`.
struct Condition: Sendable, Hashable {
    var include: Bool
    var value: ArgumentValue

    static func allow(_ conditions: [Condition], _ variables: GQLValues) -> Bool {
        conditions.allSatisfy { condition in
            let flag = condition.value.resolve(variables)?.boolValue ?? false
            return flag == condition.include
        }
    }
}

/// The fields of one object under a selection set: fragments that apply flattened in, `@skip` / `@include`
/// applied, fields of the same response key merged (their sub-selections joined), in the selection's order.
struct CollectedField: Sendable {
    var responseKey: String
    var field: FieldPlan
}

/// Decides whether a fragment's type condition holds for an object.
struct TypeMatcher: Sendable {
    /// Abstract type name → the concrete type names it covers (``GQLCache/Configuration/possibleTypes``).
    var possibleTypes: [String: Set<String>]

    /// Whether a fragment on `condition` applies to an object whose `__typename` is `typename`. A root (the
    /// operation's own object) takes every condition: it has one type. Without a `__typename` nothing but an
    /// unconditioned fragment applies.
    func matches(_ condition: String?, typename: String?, isRoot: Bool) -> Bool {
        guard let condition, !isRoot else { return true }
        guard let typename else { return false }
        return condition == typename || possibleTypes[condition]?.contains(typename) == true
    }

    func collect(
        _ set: SelectionSetPlan, typename: String?, isRoot: Bool, variables: GQLValues
    ) -> [CollectedField] {
        if let plain = set.plainFields { return plain }
        var order: [String] = []
        var byKey: [String: FieldPlan] = [:]
        func walk(_ set: SelectionSetPlan) {
            for item in set.items {
                switch item {
                case .field(let field):
                    guard Condition.allow(field.conditions, variables) else { continue }
                    if let existing = byKey[field.responseKey] {
                        if let more = field.selections {
                            byKey[field.responseKey] = existing.with(
                                selections: SelectionSetPlan(items: (existing.selections?.items ?? []) + more.items))
                        }
                    } else {
                        order.append(field.responseKey)
                        byKey[field.responseKey] = field
                    }
                case .fragment(let condition, let conditions, let selections):
                    guard Condition.allow(conditions, variables),
                        matches(condition, typename: typename, isRoot: isRoot)
                    else { continue }
                    walk(selections)
                }
            }
        }
        walk(set)
        return order.compactMap { key in byKey[key].map { CollectedField(responseKey: key, field: $0) } }
    }
}
