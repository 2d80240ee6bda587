/// Writes the SDL of the full API for a set of models, following AppSync's `@model` transform: per model T
/// the type, `ModelTConnection`, filter, condition and subscription-filter inputs, create/update/delete inputs,
/// and the `getT`/`listTs`/`syncTs` queries, mutations and `onCreateT`/`onUpdateT`/`onDeleteT` subscriptions.
struct SchemaGenerator {
    let models: [ModelDefinition]
    let enums: [(name: String, values: [String])]

    func sdl() -> String {
        var out: [String] = []
        out.append("scalar AWSDateTime\n\nscalar AWSTimestamp\n\nscalar AWSJSON")
        out.append("directive @aws_subscribe(mutations: [String]) on FIELD_DEFINITION")
        for (name, values) in enums {
            out.append("enum \(name) {\n" + values.map { "  \($0)" }.joined(separator: "\n") + "\n}")
        }
        out += scalarInputs()
        for model in models { out += modelTypes(model) }
        out.append(block("type Query", models.flatMap(queries)))
        out.append(block("type Mutation", models.flatMap(mutations)))
        out.append(block("type Subscription", models.flatMap(subscriptions)))
        return out.joined(separator: "\n\n") + "\n"
    }

    // MARK: Shared inputs

    private func scalarInputs() -> [String] {
        var out: [String] = []
        let comparisons = ["ne", "eq", "le", "lt", "ge", "gt"]
        func filterInput(_ name: String, _ type: String, text: Bool, ordered: Bool) -> String {
            var lines = (ordered ? comparisons : ["ne", "eq"]).map { "\($0): \(type)" }
            if text { lines += ["contains: \(type)", "notContains: \(type)"] }
            if ordered { lines.append("between: [\(type)]") }
            if text { lines.append("beginsWith: \(type)") }
            lines.append("attributeExists: Boolean")
            return block("input \(name)", lines)
        }
        out.append(filterInput("ModelIDInput", "ID", text: true, ordered: true))
        out.append(filterInput("ModelStringInput", "String", text: true, ordered: true))
        out.append(filterInput("ModelIntInput", "Int", text: false, ordered: true))
        out.append(filterInput("ModelFloatInput", "Float", text: false, ordered: true))
        out.append(filterInput("ModelBooleanInput", "Boolean", text: false, ordered: false))
        for (name, _) in enums {
            out.append(filterInput("Model\(name)Input", name, text: false, ordered: false))
        }
        func subscriptionInput(_ name: String, _ type: String, text: Bool, ordered: Bool) -> String {
            var lines = (ordered ? comparisons : ["ne", "eq"]).map { "\($0): \(type)" }
            if text { lines += ["contains: \(type)", "notContains: \(type)"] }
            if ordered { lines.append("between: [\(type)]") }
            if text { lines.append("beginsWith: \(type)") }
            if ordered { lines += ["in: [\(type)]", "notIn: [\(type)]"] }
            return block("input \(name)", lines)
        }
        out.append(subscriptionInput("ModelSubscriptionIDInput", "ID", text: true, ordered: true))
        out.append(subscriptionInput("ModelSubscriptionStringInput", "String", text: true, ordered: true))
        out.append(subscriptionInput("ModelSubscriptionIntInput", "Int", text: false, ordered: true))
        out.append(subscriptionInput("ModelSubscriptionFloatInput", "Float", text: false, ordered: true))
        out.append(subscriptionInput("ModelSubscriptionBooleanInput", "Boolean", text: false, ordered: false))
        return out
    }

    // MARK: Per model

    private func modelTypes(_ model: ModelDefinition) -> [String] {
        let t = model.name
        var out: [String] = []
        out.append(block("type \(t)", model.fields.map { "\($0.name): \($0.typeText)" }))
        out.append(
            block(
                "type Model\(t)Connection",
                ["items: [\(t)]!", "nextToken: String", "startedAt: AWSTimestamp"]))
        let filterFields = model.fields.map { "\($0.name): \($0.scalar.filterInput)" }
        out.append(
            block(
                "input Model\(t)FilterInput",
                filterFields + [
                    "and: [Model\(t)FilterInput]", "or: [Model\(t)FilterInput]", "not: Model\(t)FilterInput",
                ]))
        let conditionFields = model.fields.filter { $0.name != model.key }.map {
            "\($0.name): \($0.scalar.filterInput)"
        }
        out.append(
            block(
                "input Model\(t)ConditionInput",
                conditionFields + [
                    "and: [Model\(t)ConditionInput]", "or: [Model\(t)ConditionInput]", "not: Model\(t)ConditionInput",
                ]))
        let subscriptionFields = model.fields.map { "\($0.name): \($0.scalar.subscriptionFilterInput)" }
        out.append(
            block(
                "input ModelSubscription\(t)FilterInput",
                subscriptionFields + [
                    "and: [ModelSubscription\(t)FilterInput]", "or: [ModelSubscription\(t)FilterInput]",
                ]))
        let writable = model.fields.filter { !$0.isServerKept || ($0.line > 0) }
        var create: [String] = []
        var update: [String] = []
        for field in writable {
            if field.name == model.key {
                let optional = field.scalar == .id || field.scalar == .string
                create.append("\(field.name): \(field.typeText(nonNull: !optional))")
                update.append("\(field.name): \(field.typeText(nonNull: true))")
            } else {
                create.append("\(field.name): \(field.typeText(nonNull: field.nonNull && !field.isServerKept))")
                update.append("\(field.name): \(field.typeText(nonNull: false))")
            }
        }
        out.append(block("input Create\(t)Input", create + ["_version: Int"]))
        out.append(block("input Update\(t)Input", update + ["_version: Int"]))
        out.append(
            block(
                "input Delete\(t)Input", ["\(model.key): \(model.keyField.typeText(nonNull: true))", "_version: Int"]))
        return out
    }

    private func queries(_ model: ModelDefinition) -> [String] {
        let t = model.name
        let p = model.plural
        return [
            "get\(t)(\(model.key): \(model.keyField.typeText(nonNull: true))): \(t)",
            "list\(p)(filter: Model\(t)FilterInput, limit: Int, nextToken: String): Model\(t)Connection",
            "sync\(p)(filter: Model\(t)FilterInput, limit: Int, nextToken: String, lastSync: AWSTimestamp): "
                + "Model\(t)Connection",
        ]
    }

    private func mutations(_ model: ModelDefinition) -> [String] {
        let t = model.name
        return ["create", "update", "delete"].map { verb in
            "\(verb)\(t)(input: \(verb.capitalized)\(t)Input!, condition: Model\(t)ConditionInput): \(t)"
        }
    }

    private func subscriptions(_ model: ModelDefinition) -> [String] {
        let t = model.name
        return ["Create", "Update", "Delete"].map { verb in
            "on\(verb)\(t)(filter: ModelSubscription\(t)FilterInput): \(t) "
                + "@aws_subscribe(mutations: [\"\(verb.lowercased())\(t)\"])"
        }
    }

    private func block(_ head: String, _ lines: [String]) -> String {
        head + " {\n" + lines.map { "  " + $0 }.joined(separator: "\n") + "\n}"
    }
}
