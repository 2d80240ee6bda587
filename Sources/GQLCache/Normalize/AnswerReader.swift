import GQLCore

extension GQLError.Code {
    /// The cache does not hold everything an operation selects; the message names the first missing field.
    public static let cacheMiss = GQLError.Code("cacheMiss")
}

/// Builds an answer from records, following the selection in its order, as the server would have answered.
///
/// Records are loaded level by level — every record the next level of the selection reaches, in one batched
/// load — and the answer is then built depth first from them. Every key looked at, found or not, is a
/// dependency: a watcher reads again when one of them changes.
struct AnswerReader {
    let matcher: TypeMatcher
    let variables: GQLValues
    /// Loads the records of the keys it is given (the ones it has), in as few round trips as it can.
    let load: ([String]) throws -> [String: GQLValues]
    /// The ages fields are held to, the time now, and the type name of the root record (`Query`); `nil`: no
    /// field is checked (not even against a server's deadline).
    var expiry: (rule: FieldExpiry, now: Double, rootTypename: String)?
    private(set) var records: [String: GQLValues] = [:]
    /// The keys of every record the answer needed, whether the cache had it or not.
    private(set) var dependencies: Set<String> = []
    /// How many seconds past its age the stalest field the answer read is; `nil` when every field is fresh.
    private(set) var staleness: Double?

    init(matcher: TypeMatcher, variables: GQLValues, load: @escaping ([String]) throws -> [String: GQLValues]) {
        self.matcher = matcher
        self.variables = variables
        self.load = load
    }

    /// The answer to `selections` from the record `rootKey`.
    ///
    /// - Throws: ``GQLError`` `.cacheMiss` naming the first field (by its path in the answer) the cache does not
    ///   have; ``dependencies`` then holds what was looked at, so a watcher still hears when it arrives.
    mutating func read(_ selections: SelectionSetPlan, rootKey: String) throws -> GQLValue {
        staleness = nil
        path = []
        try prefetch(selections, rootKey: rootKey)
        return try build(key: rootKey, selections: selections, isRoot: true)
    }

    private struct Pending {
        var key: String
        var selections: SelectionSetPlan
        var isRoot: Bool
    }

    private mutating func prefetch(_ selections: SelectionSetPlan, rootKey: String) throws {
        var level = [Pending(key: rootKey, selections: selections, isRoot: true)]
        while !level.isEmpty {
            let wanted = Set(level.map(\.key)).subtracting(records.keys)
            dependencies.formUnion(wanted)
            if !wanted.isEmpty { records.merge(try load(Array(wanted))) { old, _ in old } }
            var next: [Pending] = []
            for pending in level {
                // No visited set is needed: each level is one step deeper in the selection, which is finite, so
                // an object referencing itself ends where the selection does.
                guard let record = records[pending.key] else { continue }
                let typename = record["__typename"]?.stringValue
                for collected in matcher.collect(
                    pending.selections, typename: typename, isRoot: pending.isRoot, variables: variables)
                {
                    guard let nested = collected.field.selections,
                        let stored = record[collected.field.storageKey(variables)]
                    else { continue }
                    StoredValue.references(in: stored) {
                        next.append(Pending(key: $0, selections: nested, isRoot: false))
                    }
                }
            }
            level = next
        }
    }

    /// The path of the value being built (response keys and list indices), kept as a stack rather than a new
    /// array per field: it is only read to name a miss.
    private var path: [String] = []

    private mutating func build(key: String, selections: SelectionSetPlan, isRoot: Bool) throws -> GQLValue {
        // A missing root reads as an empty one, so the miss names the first field asked for.
        guard let record = records[key] ?? (isRoot ? [:] : nil) else {
            throw miss("its record \(key) is not in the cache")
        }
        let typename = record["__typename"]?.stringValue
        // The server's deadlines (`Cache-Control: max-age`), looked up once per record.
        let deadlines = expiry == nil ? nil : record[FieldExpiry.expiresMember]?.objectValue
        let fields = matcher.collect(selections, typename: typename, isRoot: isRoot, variables: variables)
        var object = GQLValues(minimumCapacity: fields.count)
        for collected in fields {
            let field = collected.field
            let storageKey = field.storageKey(variables)
            path.append(collected.responseKey)
            guard let stored = record[storageKey] else {
                throw miss("record \(key) has no field \(storageKey)")
            }
            if let expiry, deadlines != nil || expiry.rule.isOn,
                let past = expiry.rule.staleness(
                    record, deadlines: deadlines, typename: isRoot ? (typename ?? expiry.rootTypename) : typename,
                    field: field.name, storageKey: storageKey, now: expiry.now)
            {
                staleness = max(staleness ?? 0, past)
            }
            if let nested = field.selections {
                object[collected.responseKey] = try buildValue(stored, selections: nested)
            } else {
                guard let value = StoredValue.unwrapLeaf(stored) else {
                    throw miss("record \(key) holds a reference at \(storageKey), not a value")
                }
                object[collected.responseKey] = value
            }
            path.removeLast()
        }
        return .object(object)
    }

    private mutating func buildValue(_ stored: GQLValue, selections: SelectionSetPlan) throws -> GQLValue {
        if let key = StoredValue.referencedKey(stored) {
            return try build(key: key, selections: selections, isRoot: false)
        }
        switch stored {
        case .null:
            return .null
        case .array(let elements):
            var values: [GQLValue] = []
            values.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                path.append(String(index))
                values.append(try buildValue(element, selections: selections))
                path.removeLast()
            }
            return .array(values)
        default:
            throw miss("the cache holds a value there, not an object")
        }
    }

    private func miss(_ reason: String) -> GQLError {
        let place = path.isEmpty ? "the operation's root" : "`\(path.joined(separator: "."))`"
        return GQLError(.cacheMiss, "\(place) is not in the cache: \(reason)", operation: "cache")
    }
}
