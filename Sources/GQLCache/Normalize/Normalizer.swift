import GQLCore

/// Records to write, each key once: what ``Normalizer`` makes of an answer.
typealias NormalizedRecords = [(key: RecordKey, fields: GQLValues)]

/// Splits one answer into records: every object with a key becomes its own record (referenced from where it
/// appeared), every other object a record under its parent's path; each record gets the fields the selection
/// asked for, under their storage keys. Records met twice in one answer (an object referencing itself, the same
/// user in two places) get the union of their fields.
struct Normalizer {
    let keys: KeyPolicy
    let matcher: TypeMatcher
    let variables: GQLValues
    /// The records to merge into the cache, each key once, in the order their objects were first met.
    private(set) var records: NormalizedRecords = []
    /// Where each key's record is in ``records``: one hash lookup per object met (a dictionary of the records
    /// themselves took three: the record taken out while its fields were added, a nested occurrence looked
    /// for, the record put back).
    private var positions: [RecordKey: Int] = [:]

    init(keys: KeyPolicy, matcher: TypeMatcher, variables: GQLValues) {
        self.keys = keys
        self.matcher = matcher
        self.variables = variables
    }

    /// The list indices of the value being added, as a stack shared by the whole walk (an unkeyed object's key
    /// names the ones since its field): no array is made per list element.
    private var indexPath: [Int] = []

    /// A value that does not fit the selection, with the path to it gathered innermost first as the walk unwinds
    /// (so no path is kept while every value fits).
    private struct Misfit: Error {
        var value: GQLValue
        var path: [String] = []
    }

    /// Adds the records of `data`, the answer of `selections` stored at `rootKey`.
    ///
    /// - Throws: ``GQLError`` `.invalidResponse` naming the path of a value that is not what the selection
    ///   asks for (a string where an object was selected, say).
    mutating func add(_ data: GQLValue, selections: SelectionSetPlan, rootKey: RecordKey) throws {
        guard case .object(let object) = data else {
            throw GQLError(.invalidResponse, "the answer's data is \(data.kindName), not an object", operation: "cache")
        }
        indexPath = []
        do {
            let typename = object["__typename"]?.stringValue
            let fields = matcher.collect(selections, typename: typename, isRoot: true, variables: variables)
            try addObject(
                object, key: rootKey, fields: fields, hasDistinctStorageKeys: selections.hasDistinctStorageKeys)
        } catch let misfit as Misfit {
            throw GQLError(
                .invalidResponse,
                "`\(misfit.path.reversed().joined(separator: "."))` is \(misfit.value.kindName) where the selection "
                    + "asks for an object", operation: "cache")
        }
    }

    /// The position of `key`'s record in ``records``, added empty when it is new.
    private mutating func position(of key: RecordKey) -> Int {
        let next = records.count
        // One lookup: the dictionary's default subscript inserts `next` when the key is missing.
        func read(_ stored: inout Int) -> Int { stored }
        let found = read(&positions[key, default: next])
        if found == next { records.append((key, GQLValues())) }
        return found
    }

    /// Adds the fields of `object`, collected under its selection set as `collectedFields`, to record `key`.
    private mutating func addObject(
        _ object: GQLValues, key: RecordKey, fields collectedFields: [CollectedField], hasDistinctStorageKeys: Bool
    ) throws {
        let position = position(of: key)
        // Taken out while its fields are added, so adding to it does not copy it; a nested occurrence of the same
        // object (one referencing itself) adds to the emptied place, joined below.
        var fields = records[position].fields
        records[position].fields = GQLValues()
        // A new record of a set whose fields have distinct storage keys takes each without a lookup.
        let appends = fields.isEmpty && hasDistinctStorageKeys
        if appends { fields.reserveCapacity(collectedFields.count) }
        for (place, collected) in collectedFields.enumerated() {
            // A field missing from the answer (an error nulled its parent, a partial answer) is left as the
            // cache had it. Answers hold their fields in the selection's order: that place is tried first.
            let value: GQLValue
            if place < object.count, object[place].key == collected.responseKey {
                value = object[place].value
            } else if let found = object[collected.responseKey] {
                value = found
            } else {
                continue
            }
            let field = collected.field
            let storageKey = field.storageKey(variables)
            let stored: GQLValue
            if let selections = field.selections {
                do {
                    stored = try addValue(
                        value, parent: key, storageKey: storageKey, selections: selections, base: indexPath.count)
                } catch var misfit as Misfit {
                    misfit.path.append(collected.responseKey)
                    throw misfit
                }
            } else {
                stored = StoredValue.leaf(value)
            }
            if appends { fields.appendUnique(storageKey, stored) } else { fields[storageKey] = stored }
        }
        if !records[position].fields.isEmpty { fields.merge(records[position].fields) { outer, _ in outer } }
        records[position].fields = fields
    }

    /// The stored form of `value` under a field with `selections`; `base` is where the field's list indices
    /// start in ``indexPath``.
    private mutating func addValue(
        _ value: GQLValue, parent: RecordKey, storageKey: String, selections: SelectionSetPlan, base: Int
    ) throws -> GQLValue {
        switch value {
        case .null:
            return .null
        case .array(let elements):
            var stored: [GQLValue] = []
            stored.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                indexPath.append(index)
                do {
                    stored.append(
                        try addValue(
                            element, parent: parent, storageKey: storageKey, selections: selections, base: base))
                } catch var misfit as Misfit {
                    misfit.path.append(String(index))
                    throw misfit
                }
                indexPath.removeLast()
            }
            return .array(stored)
        case .object(let object):
            let typename = object["__typename"]?.stringValue
            let fields = matcher.collect(selections, typename: typename, isRoot: false, variables: variables)
            let key = RecordKey(
                keys.key(of: object, typename: typename, fields: fields)
                    ?? CacheKey.path(parent.text, storageKey, Array(indexPath[base...])))
            try addObject(object, key: key, fields: fields, hasDistinctStorageKeys: selections.hasDistinctStorageKeys)
            return StoredValue.reference(key.text)
        default:
            throw Misfit(value: value)
        }
    }
}

/// Which fields make an object's key: per type (``GQLCache/Configuration/keyFields``), else the first of the
/// default names (`id`, `objectId`, `_id`) the object has.
struct KeyPolicy: Sendable {
    var keyFields: [String: [String]]
    var defaultKeyFields: [String]

    /// The object's record key; `nil` (stored under its parent's path) without a `__typename`, or when a key
    /// field is missing, `null` or not a scalar. Key fields are found by field name, through an alias if the
    /// selection gave one.
    func key(of object: GQLValues, typename: String?, fields: [CollectedField]) -> String? {
        guard let typename, !typename.isEmpty else { return nil }
        func value(_ name: String) -> GQLValue? {
            let responseKey =
                fields.first { $0.field.name == name && $0.field.arguments.isEmpty }?.responseKey ?? name
            guard let value = object[responseKey] else { return nil }
            switch value {
            case .string, .int, .double, .bool: return value
            default: return nil
            }
        }
        if let names = keyFields[typename] {
            var values: [GQLValue] = []
            for name in names {
                guard let found = value(name) else { return nil }
                values.append(found)
            }
            return values.isEmpty ? nil : CacheKey.object(typename, values)
        }
        for name in defaultKeyFields {
            if let found = value(name) { return CacheKey.object(typename, found) }
        }
        return nil
    }
}
