/// The answer types: a struct per selection on an object type (or an interface or union selected without type
/// conditions), an enum of type cases on `__typename` with an `unknown` case where a selection on an interface or
/// union has type conditions; fragments spread are properties of their own types.
extension SwiftEmitter {
    /// A selection's fields merged by response key, and the fragments that apply whole (each with whether the
    /// answer may leave it out).
    struct Merged {
        var keys: [String] = []
        var fields: [String: (occurrences: [FieldIR], conditional: Bool)] = [:]
        var fragments: [(name: String, conditional: Bool)] = []
    }

    /// What `selections` selects on an object of one of `possible`'s types: fields, inline fragments and
    /// spreads whose type condition holds for every one of them. With `partial` (a type case whose types other
    /// conditions cover in part), a condition that holds for some of them adds its fields and fragments too,
    /// optional, since an object of the other types does not have them.
    func merge(
        _ selections: Selections, for possible: Set<String>, conditional: Bool = false, partial: Bool = false,
        into merged: inout Merged
    ) {
        for item in selections.items {
            switch item {
            case .field(let field):
                let optional = conditional || field.conditional
                if var entry = merged.fields[field.key] {
                    entry.occurrences.append(field)
                    entry.conditional = entry.conditional && optional
                    merged.fields[field.key] = entry
                } else {
                    merged.keys.append(field.key)
                    merged.fields[field.key] = ([field], optional)
                }
            case .inline(let condition, let isConditional, let inner):
                let applies = schema.possible(condition)
                if possible.isSubset(of: applies) {
                    merge(
                        inner, for: possible, conditional: conditional || isConditional, partial: partial, into: &merged
                    )
                } else if partial && !possible.isDisjoint(with: applies) {
                    merge(inner, for: possible.intersection(applies), conditional: true, partial: true, into: &merged)
                }
            case .spread(let fragment, let condition, let isConditional):
                let applies = schema.possible(condition)
                let optional: Bool
                if possible.isSubset(of: applies) {
                    optional = conditional || isConditional
                } else if partial && !possible.isDisjoint(with: applies) {
                    optional = true
                } else {
                    continue
                }
                if let index = merged.fragments.firstIndex(where: { $0.name == fragment }) {
                    merged.fragments[index].conditional = merged.fragments[index].conditional && optional
                } else {
                    merged.fragments.append((fragment, optional))
                }
            }
        }
    }

    /// The type conditions of `selections` that hold for some but not all of `possible`, in document order.
    func caseConditions(_ selections: Selections, within possible: Set<String>) -> [String] {
        var found: [String] = []
        for item in selections.items {
            switch item {
            case .field: continue
            case .inline(let condition, _, let inner):
                if !possible.isSubset(of: schema.possible(condition)) { found.append(condition) }
                found += caseConditions(inner, within: possible)
            case .spread(_, let condition, _):
                if !possible.isSubset(of: schema.possible(condition)) { found.append(condition) }
            }
        }
        var seen: Set<String> = []
        return found.filter { seen.insert($0).inserted }
    }

    var selectionConformance: String { configuration.encodable ? "GQLSelectionSet, Encodable" : "GQLSelectionSet" }

    /// Emits the type `name` for a selection on objects of `possible`'s types.
    mutating func emitSelectionType(
        _ name: String, _ selections: Selections, possible: Set<String>, taken: inout Set<String>,
        into writer: inout SwiftWriter
    ) {
        let abstract = schema.types[selections.parent]?.isAbstract ?? false
        let conditions = abstract ? caseConditions(selections, within: possible) : []
        guard !conditions.isEmpty else {
            var merged = Merged()
            merge(selections, for: possible, into: &merged)
            emitStruct(name, merged, typename: false, taken: taken, into: &writer)
            return
        }
        // One case per type condition: object types first, then each interface or union for its remaining types.
        var cases: [(condition: String, possible: Set<String>)] = []
        var covered: Set<String> = []
        for condition in conditions where schema.types[condition]?.kind == .object {
            cases.append((condition, [condition]))
            covered.insert(condition)
        }
        for condition in conditions where schema.types[condition]?.kind != .object {
            let remaining = schema.possible(condition).intersection(possible).subtracting(covered)
            guard !remaining.isEmpty else { continue }
            // Another condition that covers some of these types in part adds its fields to this case, optional.
            cases.append((condition, remaining))
            covered.formUnion(remaining)
        }
        var nested = taken
        var caseNames: Set<String> = ["unknown"]
        let entries = cases.map { entry in
            (
                entry, Naming.unique(Naming.lowerCamel(entry.condition), in: &caseNames),
                Naming.unique(
                    Naming.reservedTypes.contains(entry.condition) ? entry.condition + "_" : entry.condition,
                    in: &nested)
            )
        }
        let other = Naming.unique("Other", in: &nested)
        writer.block("\(access)enum \(name): \(selectionConformance)") { writer in
            for (_, caseName, typeName) in entries { writer.line("case \(Naming.identifier(caseName))(\(typeName))") }
            writer.line("case unknown(\(other))")
            writer.line()
            writer.block("\(access)init(from decoder: any Decoder) throws") { writer in
                writer.switchBlock("try decoder.gqlTypename()") { writer in
                    for (entry, caseName, typeName) in entries {
                        let labels = entry.possible.sorted().map { Naming.rawString($0) }.joined(separator: ", ")
                        writer.line(
                            "case \(labels): self = .\(Naming.identifier(caseName))(try \(typeName)(from: decoder))")
                    }
                    writer.line("default: self = .unknown(try \(other)(from: decoder))")
                }
            }
            if configuration.encodable {
                writer.line()
                writer.block("\(access)func encode(to encoder: any Encoder) throws") { writer in
                    writer.switchBlock("self") { writer in
                        for (_, caseName, _) in entries {
                            writer.line(
                                "case .\(Naming.identifier(caseName))(let value): try value.encode(to: encoder)")
                        }
                        writer.line("case .unknown(let value): try value.encode(to: encoder)")
                    }
                }
            }
            for (entry, _, typeName) in entries {
                writer.line()
                var merged = Merged()
                merge(selections, for: entry.possible, partial: true, into: &merged)
                // Encoded, a case must carry the `__typename` its decoding switches on.
                emitStruct(typeName, merged, typename: configuration.encodable, taken: nested, into: &writer)
            }
            writer.line()
            var merged = Merged()
            merge(selections, for: possible, into: &merged)
            emitStruct(other, merged, typename: true, taken: nested, into: &writer)
        }
    }

    /// A struct of merged fields (and `__typename` when `typename`), its nested types, and its fragments as
    /// properties decoded from the same object.
    private mutating func emitStruct(
        _ name: String, _ merged: Merged, typename: Bool, taken: Set<String>, into writer: inout SwiftWriter
    ) {
        var merged = merged
        if typename && merged.fields["__typename"] == nil {
            merged.keys.insert("__typename", at: 0)
            merged.fields["__typename"] = (
                [
                    FieldIR(
                        key: "__typename", name: "__typename",
                        type: .nonNull(.named("String")), conditional: false, selections: nil)
                ], false
            )
        }
        // Nested type names avoid the enclosing scopes' names, Swift's and this struct's properties.
        var nested = taken.union(merged.keys)
        var properties: [(key: String, type: String, nested: (name: String, selections: Selections)?)] = []
        for key in merged.keys {
            guard let entry = merged.fields[key], let first = entry.occurrences.first else { continue }
            var type: String
            var inner: (String, Selections)?
            if first.selections != nil {
                let isList: Bool = if case .list = first.type.nullable { true } else { false }
                var base = Naming.typeName(forKey: key, isList: isList)
                if Naming.reservedTypes.contains(base) { base += "_" }
                let typeName = Naming.unique(base, in: &nested)
                var items: [Selections.Item] = []
                for occurrence in entry.occurrences { items += occurrence.selections?.items ?? [] }
                inner = (typeName, Selections(parent: first.type.name, items: items))
                type = swiftType(first.type) { _ in typeName }
            } else {
                type = swiftType(first.type, leaf: leafType)
            }
            if entry.conditional && !type.hasSuffix("?") { type += "?" }
            properties.append((key, type, inner))
        }
        var propertyNames = Set(merged.keys)
        let fragments = merged.fragments.map { fragment in
            var property = Naming.lowerFirst(fragment.name)
            if propertyNames.contains(property) { property += "Fragment" }
            return (
                property: Naming.unique(property, in: &propertyNames), type: fragment.name,
                presence: fragment.conditional ? ownPresenceKeys(fragment.name, in: merged) : nil
            )
        }
        writer.block("\(access)struct \(name): \(selectionConformance)") { writer in
            for property in properties {
                writer.line("\(access)var \(Naming.identifier(property.key)): \(property.type)")
            }
            for fragment in fragments {
                writer.line(
                    "\(access)var \(Naming.identifier(fragment.property)): \(fragment.type)\(fragment.presence == nil ? "" : "?")"
                )
            }
            if !fragments.isEmpty { emitCoding(properties.map { ($0.key, $0.type) }, fragments, into: &writer) }
            for property in properties {
                guard let inner = property.nested else { continue }
                writer.line()
                emitSelectionType(
                    inner.name, inner.selections, possible: schema.possible(inner.selections.parent),
                    taken: &nested, into: &writer)
            }
        }
    }

    /// `init(from:)` (and `encode(to:)`) for a struct with fragments: its fields by key, each fragment from the
    /// whole object.
    private func emitCoding(
        _ fields: [(key: String, type: String)], _ fragments: [(property: String, type: String, presence: [String]?)],
        into writer: inout SwiftWriter
    ) {
        writer.line()
        if !fields.isEmpty {
            writer.line(
                "enum CodingKeys: String, CodingKey { case \(fields.map { Naming.identifier($0.key) }.joined(separator: ", ")) }"
            )
        }
        writer.line()
        writer.block("\(access)init(from decoder: any Decoder) throws") { writer in
            if !fields.isEmpty { writer.line("let container = try decoder.container(keyedBy: CodingKeys.self)") }
            for field in fields {
                let name = Naming.identifier(field.key)
                if field.type.hasSuffix("?") {
                    writer.line(
                        "\(name) = try container.decodeIfPresent(\(field.type.dropLast()).self, forKey: .\(name))")
                } else {
                    writer.line("\(name) = try container.decode(\(field.type).self, forKey: .\(name))")
                }
            }
            for fragment in fragments {
                let property = Naming.identifier(fragment.property)
                if let keys = fragment.presence, keys.isEmpty {
                    // Every key it has may come from the rest of the selection: decoded when its fields all came.
                    writer.line("\(property) = try? \(fragment.type)(from: decoder)")
                } else if let keys = fragment.presence {
                    let list = keys.map { Naming.rawString($0) }.joined(separator: ", ")
                    writer.line(
                        "\(property) = try decoder.gqlContains([\(list)]) ? \(fragment.type)(from: decoder) : nil")
                } else {
                    writer.line("\(property) = try \(fragment.type)(from: decoder)")
                }
            }
        }
        guard configuration.encodable else { return }
        writer.line()
        writer.block("\(access)func encode(to encoder: any Encoder) throws") { writer in
            if !fields.isEmpty { writer.line("var container = encoder.container(keyedBy: CodingKeys.self)") }
            for field in fields {
                let name = Naming.identifier(field.key)
                writer.line(
                    "try container.encode\(field.type.hasSuffix("?") ? "IfPresent" : "")(\(name), forKey: .\(name))")
            }
            for fragment in fragments {
                let optional = fragment.presence == nil ? "" : "?"
                writer.line("try \(Naming.identifier(fragment.property))\(optional).encode(to: encoder)")
            }
        }
    }

    /// The presence keys of a fragment the answer may leave out that nothing else in `merged` selects (its fields,
    /// included or not, and its other fragments' fields): only those tell that this fragment came. Empty when
    /// every one of them may come from elsewhere.
    func ownPresenceKeys(_ fragment: String, in merged: Merged) -> [String] {
        var elsewhere = Set(merged.keys)
        for other in merged.fragments where other.name != fragment {
            elsewhere.formUnion(presenceKeys(other.name, partial: true))
        }
        return presenceKeys(fragment).filter { !elsewhere.contains($0) }
    }

    /// The keys whose presence tells that a fragment the answer may leave out came: its fields that are always
    /// there when it is (those of the fragments it spreads included), `__typename` aside; for a fragment that has
    /// none, the fields it selects under a condition (it is then left out when they did not come).
    func presenceKeys(_ fragment: String, partial: Bool = false) -> [String] {
        guard let definition = set.fragments[fragment] else { return [] }
        var merged = Merged()
        merge(definition.selections, for: schema.possible(definition.typeCondition), partial: partial, into: &merged)
        var keys = merged.keys.filter { $0 != "__typename" && (partial || merged.fields[$0]?.conditional == false) }
        for inner in merged.fragments where partial || !inner.conditional {
            keys += presenceKeys(inner.name, partial: partial).filter { !keys.contains($0) }
        }
        return keys.isEmpty && !partial ? presenceKeys(fragment, partial: true) : keys
    }
}
