import GQLCore

extension GQLError.Code {
    /// The cache does not hold everything an operation selects; the message names the first missing field.
    public static let cacheMiss = GQLError.Code("cacheMiss")
}

/// Builds an answer from records, following the selection in its order, as the server would have answered.
///
/// A read first tries to build the answer in one pass from the memory layer (a snapshot of it: no record is
/// copied). When a record it needs is not there (a cold cache), it loads instead level by level — every record
/// the next level of the selection reaches, in one batched load from SQLite — and then builds the answer from
/// them. Every key looked at, found or not, is a dependency: a watcher reads again when one of them changes.
struct AnswerReader {
    let matcher: TypeMatcher
    let variables: GQLValues
    let store: RecordStore
    /// The ages fields are held to, the time now, and the type name of the root record (`Query`); `nil`: no
    /// field is checked (not even against a server's deadline).
    var expiry: (rule: FieldExpiry, now: Double, rootTypename: String)? {
        didSet { agesAreOn = expiry?.rule.isOn == true }
    }
    /// The memory layer as the read began (after a load: as it is with the rows loaded), and the records kept
    /// apart from it: overlaid by layers, or loaded when the memory layer may not keep them (see ``prefetch``).
    var snapshot: RecordStore.Snapshot
    /// The change stamp taken after the last load that did not refresh the snapshot (see ``stamp``).
    var loadStamp: UInt64 = 0
    var loaded: [RecordKey: GQLValues] = [:]
    /// Whether a record the build needed was missing from memory (the build then stops, to load and build again).
    private var lacking = false
    /// Whether every level was loaded from SQLite: a record missing now is missing.
    private var isLoaded = false
    /// The keys of every record the answer needed, whether the cache had it or not, in the order looked at; kept
    /// only when ``keepsKeys`` (a watcher's read) or under a byte budget (the read times), empty otherwise.
    private(set) var visited: [RecordKey] = []
    /// Whether the caller wants the keys read (``visited``, ``dependencies``): a watcher does, a plain read or
    /// fetch does not, and then no list of 6,000 keys is made per read of a large answer.
    private let keepsVisits: Bool
    /// How many seconds past its age the stalest field the answer read is; `nil` when every field is fresh.
    private(set) var staleness: Double?
    /// The storage keys of the fields with arguments met in this read (``storageKey(_:)``), each with its plan:
    /// a plan merged for one build (a response key selected twice) is freed after it, and a later plan could then
    /// be allocated at its address, so the entry keeps it alive and its identity unique for the whole read.
    private var argumentKeys: [ObjectIdentifier: (plan: FieldPlan, key: String)] = [:]
    /// Whether the configuration gives fields ages (then every field's age is checked): ``expiry``'s, kept apart
    /// so that a record's build does not copy the rule to ask.
    private var agesAreOn = false

    init(matcher: TypeMatcher, variables: GQLValues, store: RecordStore, keepsKeys: Bool = true) {
        self.matcher = matcher
        self.variables = variables
        self.store = store
        keepsVisits = keepsKeys || store.maximumBytes != nil
        snapshot = store.snapshot()
    }

    /// The keys of every record the answer needed, whether the cache had it or not.
    var dependencies: Set<RecordKey> { Set(visited) }

    /// The change stamp (``RecordStore/ChangeLog``) of what the read holds: taken with its last snapshot or after
    /// its last load, so every change the read may hold was noted at or before it, and none noted after it.
    var stamp: UInt64 { max(snapshot.stamp, loadStamp) }

    /// The answer to `selections` from the record `rootKey`.
    ///
    /// - Throws: ``GQLError`` `.cacheMiss` naming the first field (by its path in the answer) the cache does not
    ///   have; ``dependencies`` then holds what was looked at, so a watcher still hears when it arrives.
    mutating func read(_ selections: SelectionSetPlan, rootKey: RecordKey) throws -> GQLValue {
        let answer: GQLValue
        do {
            answer = try assemble(selections, rootKey: rootKey)
        } catch let miss as Miss {
            try store.noteReadsUnderBudget(visited)
            let path = miss.path.reversed()
            let place = path.isEmpty ? "the operation's root" : "`\(path.joined(separator: "."))`"
            throw GQLError(.cacheMiss, "\(place) is not in the cache: \(miss.reason)", operation: "cache")
        }
        try store.noteReadsUnderBudget(visited)
        return answer
    }

    private mutating func assemble(_ selections: SelectionSetPlan, rootKey: RecordKey) throws -> GQLValue {
        do {
            return try build(key: rootKey, selections: selections, isRoot: true)
        } catch is Miss where lacking {
            // A record was not in memory: load every level from SQLite, then build again.
            staleness = nil
            try prefetch(selections, rootKey: rootKey)
            isLoaded = true
            visited = []
            return try build(key: rootKey, selections: selections, isRoot: true)
        }
    }

    /// A field the cache lacks, with the path to it gathered innermost first as the build unwinds.
    private struct Miss: Error {
        var reason: String
        var path: [String] = []
    }

    /// The record of `key`: from the snapshot (with any layer over it), or loaded; `nil` when it is neither.
    mutating func record(_ key: RecordKey) -> GQLValues? {
        if !loaded.isEmpty, let record = loaded[key] { return record }
        guard snapshot.layers.isEmpty else {
            // Not in memory (a cold cache): the table may hold it under the layers, which set only some of its
            // fields, so it is loaded first (the load lays the layers over it) rather than read from them alone;
            // unless the memory layer holds every row (a record only a layer has, such as an optimistic new
            // object, is then read from the layers without asking SQLite).
            guard snapshot.records[key] != nil || isLoaded || snapshot.isComplete else { return nil }
            var found: [RecordKey: GQLValues] = [:]
            found[key] = snapshot.records[key]
            RecordStore.overlay(snapshot.layers, on: &found, keys: [key])
            if let record = found[key] { loaded[key] = record }
            return found[key]
        }
        return snapshot.records[key]
    }

    private mutating func build(key: RecordKey, selections: SelectionSetPlan, isRoot: Bool) throws -> GQLValue {
        if keepsVisits { visited.append(key) }
        // A missing root reads as an empty one, so the miss names the first field asked for.
        guard let record = record(key) ?? (isRoot && isLoaded ? [:] : nil) else {
            lacking = !isLoaded
            throw Miss(reason: "its record \(key) is not in the cache")
        }
        // The server's deadlines (`Cache-Control: max-age`), looked up once per record, and only when a record
        // may hold them.
        let deadlines =
            expiry == nil || !snapshot.mayHoldDeadlines ? nil : record[FieldExpiry.expiresMember]?.objectValue
        let checksAge = deadlines != nil || agesAreOn
        if !checksAge, let names = selections.leafNames, Self.holdsExactly(names, record) {
            // The record is the answer's object as it stands: shared (one retain), not rebuilt member by member.
            return .object(record)
        }
        // The type name matters only to fragments and to ages: a set of plain fields is the same for every type.
        let typename = selections.plainFields == nil || checksAge ? record["__typename"]?.stringValue : nil
        let fields =
            selections.plainFields
            ?? matcher.collect(
                selections, typename: typename, isRoot: isRoot, variables: variables)
        if !checksAge, let members = try buildInOrder(record, key: key, fields) {
            return .object(GQLValues(uniqueMembers: members))
        }
        var members: [GQLValues.Element] = []
        members.reserveCapacity(fields.count)
        try record.withMembers { stored in
            for position in fields.indices {
                // Each member is copied once, into the answer; the rest reads it in place.
                let collected = fields[position]
                let field = collected.field
                let (storageKey, found) = locate(field, at: position, in: stored, of: record)
                guard let place = found else {
                    throw Miss(reason: "record \(key) has no field \(storageKey)", path: [collected.responseKey])
                }
                if checksAge, let expiry,
                    let past = expiry.rule.staleness(
                        record, deadlines: deadlines, typename: isRoot ? (typename ?? expiry.rootTypename) : typename,
                        field: field.name, storageKey: storageKey, now: expiry.now)
                {
                    staleness = max(staleness ?? 0, past)
                }
                var value = stored[place].value
                if let nested = field.selections {
                    do {
                        value = try buildValue(value, selections: nested)
                    } catch var miss as Miss {
                        miss.path.append(collected.responseKey)
                        throw miss
                    }
                } else {
                    switch value {
                    case .object, .array:
                        guard let leaf = StoredValue.unwrapLeaf(value) else {
                            throw Miss(
                                reason: "record \(key) holds a reference at \(storageKey), not a value",
                                path: [collected.responseKey])
                        }
                        value = leaf
                    default:
                        break
                    }
                }
                // Response keys are unique among the collected fields.
                members.append((collected.responseKey, value))
            }
        }
        return .object(GQLValues(uniqueMembers: members))
    }

    /// The answer's members when `record` holds `fields` first, in their order (as the selection that wrote it
    /// left it), with no age to check; `nil` when it does not (the general loop of ``build(key:selections:isRoot:)``
    /// then reads it, again from its first field).
    ///
    /// The record's members and the fields are read through pointers, in place: indexing either array, or
    /// iterating it (a closure over `allSatisfy` included), hands out each element copied — a retain of every
    /// reference it holds, on a record of the memory layer mostly the first touch of its line, and an atomic one
    /// — where in place only the value kept is copied, once, into the answer.
    private mutating func buildInOrder(_ record: GQLValues, key: RecordKey, _ fields: [CollectedField]) throws
        -> [GQLValues.Element]?
    {
        guard record.count >= fields.count else { return nil }
        var members: [GQLValues.Element] = []
        members.reserveCapacity(fields.count)
        let inOrder = try record.withMembers { stored in
            try fields.withUnsafeBufferPointer { wanted in
                guard let member = stored.baseAddress, let collected = wanted.baseAddress else { return true }
                for position in 0..<wanted.count {
                    let field = collected[position].field
                    let name = field.arguments.isEmpty ? field.name : storageKey(field)
                    guard member[position].key == name else { return false }
                    if let nested = field.selections {
                        do {
                            let value =
                                if let stored = Self.value(of: member + position) {
                                    try buildValue(at: stored, selections: nested)
                                } else {
                                    try buildValue(member[position].value, selections: nested)
                                }
                            members.append((collected[position].responseKey, value))
                        } catch var miss as Miss {
                            miss.path.append(collected[position].responseKey)
                            throw miss
                        }
                        continue
                    }
                    switch member[position].value {
                    case .object, .array:
                        guard let leaf = StoredValue.unwrapLeaf(member[position].value) else {
                            throw Miss(
                                reason: "record \(key) holds a reference at \(name), not a value",
                                path: [collected[position].responseKey])
                        }
                        members.append((collected[position].responseKey, leaf))
                    default:
                        members.append((collected[position].responseKey, member[position].value))
                    }
                }
                return true
            }
        }
        return inOrder ? members : nil
    }

    /// Where a member keeps its value: the offset of the tuple's `value` element, as the compiler lays it out
    /// (`nil` only if a member were not laid out in place; the member is then read by a copy).
    private static let valueOffset = MemoryLayout<GQLValues.Element>.offset(of: \GQLValues.Element.value)

    /// The value of the member at `member`, in place; `nil` when its place is not known (see ``valueOffset``).
    static func value(of member: UnsafePointer<GQLValues.Element>) -> UnsafePointer<GQLValue>? {
        guard let valueOffset else { return nil }
        return UnsafeRawPointer(member).advanced(by: valueOffset).assumingMemoryBound(to: GQLValue.self)
    }

    /// The key `field` is stored under, and where `record` (whose members are `stored`) holds it: first at
    /// `position`, where a record written by the same selection holds it, else wherever it is; `nil` when absent.
    mutating func locate(
        _ field: FieldPlan, at position: Int, in stored: UnsafeBufferPointer<GQLValues.Element>, of record: GQLValues
    ) -> (storageKey: String, place: Int?) {
        let storageKey = field.arguments.isEmpty ? field.name : storageKey(field)
        if position < stored.count, stored[position].key == storageKey { return (storageKey, position) }
        return (storageKey, record.index(forKey: storageKey))
    }

    /// The storage key of a field with arguments (``FieldPlan/storageKey(_:)``), made once per read: the same
    /// field under every object of a list has the same arguments.
    private mutating func storageKey(_ field: FieldPlan) -> String {
        let id = ObjectIdentifier(field)
        if let known = argumentKeys[id] { return known.key }
        let made = field.storageKey(variables)
        argumentKeys[id] = (field, made)
        return made
    }

    /// Whether `record` holds the members `names` and no others, in that order, each a value a leaf answers as
    /// stored (a scalar, `null`, or lists of them: no wrapped object, no reference).
    private static func holdsExactly(_ names: [String], _ record: GQLValues) -> Bool {
        guard record.count == names.count else { return false }
        // Read in place, through pointers (see ``buildInOrder``).
        return record.withMembers { stored in
            names.withUnsafeBufferPointer { names in
                guard let member = stored.baseAddress, let name = names.baseAddress else { return true }
                for position in 0..<names.count {
                    guard member[position].key == name[position] else { return false }
                    switch member[position].value {
                    case .object: return false
                    case .array: if !isPlain(member[position].value) { return false }
                    default: continue
                    }
                }
                return true
            }
        }
    }

    private static func isPlain(_ stored: GQLValue) -> Bool {
        switch stored {
        case .object: false
        case .array(let elements): elements.allSatisfy(isPlain)
        default: true
        }
    }

    private mutating func buildValue(_ stored: GQLValue, selections: SelectionSetPlan) throws -> GQLValue {
        try withUnsafePointer(to: stored) { try buildValue(at: $0, selections: selections) }
    }

    /// The answer's value for the stored value at `stored` (a reference, a list of them, or `null`), read in
    /// place (see ``buildInOrder``).
    private mutating func buildValue(at stored: UnsafePointer<GQLValue>, selections: SelectionSetPlan) throws
        -> GQLValue
    {
        switch stored.pointee {
        case .null:
            return .null
        case .object:
            guard let key = StoredValue.referencedKey(stored.pointee) else {
                throw Miss(reason: "the cache holds a value there, not an object")
            }
            return try build(key: RecordKey(key), selections: selections, isRoot: false)
        case .array:
            let built = try StoredValue.withElements(stored.pointee) { elements in
                var values: [GQLValue] = []
                values.reserveCapacity(elements.count)
                guard let element = elements.baseAddress else { return GQLValue.array(values) }
                for index in 0..<elements.count {
                    do {
                        values.append(try buildValue(at: element + index, selections: selections))
                    } catch var miss as Miss {
                        miss.path.append(String(index))
                        throw miss
                    }
                }
                return GQLValue.array(values)
            }
            return built ?? .null
        default:
            throw Miss(reason: "the cache holds a value there, not an object")
        }
    }
}
