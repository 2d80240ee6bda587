import GraphQL

/// GraphQL's "fields can merge" rule (the spec's FieldsInSetCanMerge): the fields one response key answers, across
/// a selection set's inline fragments and spreads, must be one field, or fields of object types that exclude each
/// other with answers of the same shape. A server refuses a document that breaks it, so the generator does too,
/// naming both places.
extension DocumentSet {
    /// Reports every conflict in the operations' and fragments' selections (each once).
    mutating func checkMerges() {
        var reported: Set<Place> = []
        for name in fragments.keys.sorted() {
            guard let fragment = fragments[name] else { continue }
            checkMerges(fields(of: fragment.selections), exclusive: false, reported: &reported)
        }
        for operation in operations {
            checkMerges(fields(of: operation.selections), exclusive: false, reported: &reported)
        }
    }

    /// Every field `selections` selects, through its inline fragments and spreads, in document order. A fragment
    /// spread again in the same object adds the same fields: it is walked once (so that fragments spreading others
    /// twice, level after level, cannot make the walk exponential).
    func fields(of selections: Selections) -> [FieldIR] {
        var spread: Set<String> = []
        return fields(of: selections, spread: &spread)
    }

    private func fields(of selections: Selections, spread: inout Set<String>) -> [FieldIR] {
        var found: [FieldIR] = []
        for item in selections.items {
            switch item {
            case .field(let field): found.append(field)
            case .inline(_, _, let inner): found += fields(of: inner, spread: &spread)
            case .spread(let name, _, _):
                guard spread.insert(name).inserted, let fragment = fragments[name] else { continue }
                found += fields(of: fragment.selections, spread: &spread)
            }
        }
        return found
    }

    /// Checks the fields of one response object; `exclusive`: their parents are already known to be object types
    /// that exclude each other (then only the answers' shapes must agree).
    private mutating func checkMerges(_ fields: [FieldIR], exclusive: Bool, reported: inout Set<Place>) {
        var byKey: [String: [FieldIR]] = [:]
        var order: [String] = []
        for field in fields {
            if byKey[field.key] == nil { order.append(field.key) }
            byKey[field.key, default: []].append(field)
        }
        for key in order {
            guard let group = byKey[key], let first = group.first else { continue }
            var spread: Set<String> = []
            let firstSub: [FieldIR] = first.selections.map { self.fields(of: $0, spread: &spread) } ?? []
            // The sub-fields of the pairs that do not exclude each other are compared as such, together; each
            // exclusive pair's on its own (one exclusive pair must not make the others' sub-fields exclusive).
            var sub = firstSub
            for other in group.dropFirst() {
                let excludes =
                    exclusive || (first.parent != other.parent && isObject(first.parent) && isObject(other.parent))
                if let conflict = conflict(first, other, excludes: excludes) {
                    if let place = other.place, reported.insert(place).inserted {
                        errors.append(
                            .init(
                                .error, file: place.file, line: place.line, column: place.column,
                                "\(key) cannot answer both \(first.parent).\(first.name)\(Self.call(first.arguments)): "
                                    + "\(first.type) (at \(first.place?.description ?? "?")) and "
                                    + "\(other.parent).\(other.name)\(Self.call(other.arguments)): \(other.type): "
                                    + "\(conflict); alias one of them"))
                    }
                    continue
                }
                if excludes && !exclusive {
                    var pairSpread: Set<String> = []
                    let otherSub = other.selections.map { self.fields(of: $0, spread: &pairSpread) } ?? []
                    if !otherSub.isEmpty { checkMerges(firstSub + otherSub, exclusive: true, reported: &reported) }
                } else {
                    sub += other.selections.map { self.fields(of: $0, spread: &spread) } ?? []
                }
            }
            if !sub.isEmpty { checkMerges(sub, exclusive: exclusive, reported: &reported) }
        }
    }

    /// Why two fields under one response key cannot merge, or nil when they can.
    private func conflict(_ a: FieldIR, _ b: FieldIR, excludes: Bool) -> String? {
        if !excludes {
            if a.name != b.name { return "they are different fields" }
            if a.arguments != b.arguments { return "their arguments differ" }
        }
        return shapesDiffer(a.type, b.type) ? "their answers have different types" : nil
    }

    /// Whether two output types answer differently: lists and non-nulls must match, leaf types be the same type, a
    /// leaf never meets an object (objects' own fields are compared one level down).
    private func shapesDiffer(_ a: TypeReference, _ b: TypeReference) -> Bool {
        switch (a, b) {
        case (.nonNull(let x), .nonNull(let y)), (.list(let x), .list(let y)): return shapesDiffer(x, y)
        case (.named(let x), .named(let y)):
            let xComposite = schema.types[x]?.isComposite ?? false
            let yComposite = schema.types[y]?.isComposite ?? false
            if xComposite && yComposite { return false }
            return xComposite != yComposite || x != y
        default: return true
        }
    }

    private func isObject(_ name: String) -> Bool { schema.types[name]?.kind == .object }

    private static func call(_ arguments: String) -> String { arguments.isEmpty ? "" : "(\(arguments))" }
}
