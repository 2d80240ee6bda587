import GQLCore

/// How a read that misses the memory layer loads its records: level by level, each level in one batched load from
/// SQLite (``RecordStore/loadFromTableNotingJoin(_:generation:)``), before the answer is built from them.
extension AnswerReader {
    /// A record to load and the selections it is read with: the root's, or those of the field that reached it
    /// (kept as the field, one reference, rather than a copy of its selection set).
    struct Pending {
        var key: RecordKey
        var field: FieldPlan?
    }

    /// Loads every record the selection reaches, level by level: those not in memory are read from SQLite in one
    /// batched load per level, and join the memory layer.
    ///
    /// While nothing but loads joins the memory layer (no write, nothing trimmed, no optimistic layer), every
    /// record found or loaded stays in the latest ``snapshot``, which the build then reads: no record is copied
    /// or looked up in a second table. Otherwise every record is kept in ``loaded``, so a memory layer trimmed
    /// meanwhile (or a write keeping a load out of it) cannot make the build miss.
    mutating func prefetch(_ selections: SelectionSetPlan, rootKey: RecordKey) throws {
        let start = (generation: snapshot.generation, trims: snapshot.trims)
        var pinned = snapshot.layers.isEmpty
        var level = [Pending(key: rootKey, field: nil)]
        // While pinned, the keys looked for (a key met again is found in the snapshot, one lookup; one not in
        // the table is looked for again, and a key wanted twice in a level is loaded once). Once not, every key
        // looked for, found or not, so a key met again costs one lookup.
        var looked: [RecordKey] = []
        var seen: Set<RecordKey> = []
        while !level.isEmpty {
            var wanted: [RecordKey] = []
            // While pinned, where each pending's record is, for the walk (not looked up again).
            var sources: [Source] = []
            if pinned { sources.reserveCapacity(level.count) }
            for pending in level {
                if pinned {
                    looked.append(pending.key)
                    if let record = snapshot.records[pending.key] {
                        sources.append(.found(record))
                    } else {
                        sources.append(.wanted(wanted.count))
                        wanted.append(pending.key)
                    }
                    continue
                }
                guard seen.insert(pending.key).inserted else { continue }
                if let record = record(pending.key) {
                    loaded[pending.key] = record
                } else {
                    wanted.append(pending.key)
                }
            }
            var rows: [GQLValues?] = []
            if !wanted.isEmpty {
                // The snapshot's records are let go while the load joins the memory layer, which would otherwise
                // copy them all for this reader; a fresh snapshot has them and what joined.
                let generation = snapshot.generation
                snapshot.records = [:]
                let joined: Bool
                (rows, joined) = try store.loadFromTableNotingJoin(wanted, generation: generation)
                snapshot = store.snapshot()
                if pinned,
                    !joined || snapshot.generation != start.generation || snapshot.trims != start.trims
                        || !snapshot.layers.isEmpty
                {
                    pinned = false
                    seen = Set(looked)
                    try keepSeen(seen, except: Set(wanted))
                }
                if !pinned { keep(rows, keys: wanted) }
            }
            var next: [Pending] = []
            for (position, pending) in level.enumerated() {
                // A set of leaves only (the most common innermost set) refers to nothing: its record is not read.
                let nested = pending.field?.selections ?? selections
                guard nested.leafNames == nil else { continue }
                var record = pinned ? nil : loaded[pending.key]
                switch pinned ? sources[position] : nil {
                case .found(let found): record = found
                // A key wanted twice in the level was loaded at one of its places: the snapshot has it.
                case .wanted(let place): record = rows[place] ?? snapshot.records[pending.key]
                case nil: break
                }
                // No visited set is needed: each level is one step deeper in the selection, which is finite, so
                // an object referencing itself ends where the selection does.
                if let record { walk(pending, record, selections: nested, into: &next) }
            }
            level = next
        }
    }

    /// Where a pending record is while a level loads, pinned: in the snapshot, or loaded at a place among the
    /// level's wanted keys.
    private enum Source { case found(GQLValues), wanted(Int) }

    /// Adds to `next` every record `record` (`pending`'s) refers to through a field of its selections.
    private mutating func walk(
        _ pending: Pending, _ record: GQLValues, selections: SelectionSetPlan, into next: inout [Pending]
    ) {
        let fields =
            selections.plainFields
            ?? matcher.collect(
                selections, typename: record["__typename"]?.stringValue, isRoot: pending.field == nil,
                variables: variables)
        record.withMembers { stored in
            guard let member = stored.baseAddress else { return }
            for position in fields.indices {
                let field = fields[position].field
                guard field.selections != nil,
                    let place = locate(field, at: position, in: stored, of: record).place
                else { continue }
                let found = { (key: String) in next.append(Pending(key: RecordKey(key), field: field)) }
                if let value = Self.value(of: member + place) {
                    StoredValue.references(at: value, found)
                } else {
                    StoredValue.references(in: stored[place].value, found)
                }
            }
        }
    }

    /// Puts the records loaded for `keys` (each at its key's place, ``RecordStore/loadFromTableNotingJoin``) in
    /// ``loaded``, with the snapshot's layers over them.
    private mutating func keep(_ records: [GQLValues?], keys: [RecordKey]) {
        guard !snapshot.layers.isEmpty else {
            for (key, record) in zip(keys, records) { if let record { loaded[key] = record } }
            return
        }
        var found: [RecordKey: GQLValues] = [:]
        for (key, record) in zip(keys, records) { if let record { found[key] = record } }
        RecordStore.overlay(snapshot.layers, on: &found, keys: keys)
        for (key, record) in found { loaded[key] = record }
    }

    /// Puts every record of `seen` (but those of `except`, just loaded) in ``loaded``: from the snapshot, or
    /// read again when the memory layer let it go since it was found.
    private mutating func keepSeen(_ seen: Set<RecordKey>, except: Set<RecordKey>) throws {
        var gone: [RecordKey] = []
        for key in seen where !except.contains(key) {
            if let record = record(key) { loaded[key] = record } else { gone.append(key) }
        }
        guard !gone.isEmpty else { return }
        keep(try store.loadFromTableNotingJoin(gone, generation: snapshot.generation).records, keys: gone)
        loadStamp = store.currentStamp
    }
}
