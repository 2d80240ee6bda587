import Foundation
import GQLCore
import GQLStore

/// The cache's records: one row per record in `_gqlcache_records` (its fields in ``RecordCodec``'s binary form),
/// and an in-memory layer in front of the table.
///
/// Writes go through ``merge(_:)``, ``remove(_:)`` and ``removeAll()``, one at a time (a lock held across the
/// transaction and the memory update), so the memory layer and the table always agree. A read takes what the
/// memory layer has and loads the rest from SQLite in batches of keys; what it loads joins the memory layer
/// only if no write came in between (a generation count), so a stale row can never return over a newer write.
///
/// Optimistic layers (``RecordStore+Layers.swift``) sit above both: records read are overlaid with every layer's
/// fields, oldest layer first, while writes, trimming and garbage collection see the base records only.
final class RecordStore: Sendable {
    let database: GQLDatabase
    /// Most records the memory layer keeps; past it, half of them are dropped (they stay in SQLite).
    let memoryLimit: Int

    static let table = "_gqlcache_records"
    static let namespace = "gqlcache"
    /// Rows a read copies out of SQLite before it decodes them (see ``selectRows(_:_:hasDeadlines:)``).
    static let batchSize = 500

    /// Most bytes (keys and stored fields) the table may hold; past it the least recently read records go.
    let maximumBytes: Int?
    /// The time now in seconds since 1970 (the configuration's clock).
    let clock: @Sendable () -> Double

    struct Memory {
        var records: [RecordKey: GQLValues] = [:]
        var generation: UInt64 = 0
        /// Which records the recent changes touched (writes, removals, optimistic layers).
        var changes = ChangeLog()
        /// Counts the times ``trim(_:)`` dropped records (which, unlike writes, leaves the generation as it is).
        var trims: UInt64 = 0
        /// Whether the memory layer holds every row of the table (the table was empty when the cache opened or
        /// was cleared, and nothing was trimmed from memory since): a key it lacks is then in no row either, and
        /// a write need not look for it in the table. (This store is the file's only writer of records.)
        var isComplete = false
        /// Whether any record in memory may hold a server's deadlines (``FieldExpiry/expiresMember``); set once
        /// one is written or loaded, never cleared. A read looks for deadlines only then.
        var mayHoldDeadlines = false
        /// Read times not yet written to `read_at` (only with a byte budget): written with the next write.
        var reads: [RecordKey: Double] = [:]
        /// Optimistic layers, oldest first: read over the records, never written into them.
        var layers: [Layer] = []
        var nextLayer: UInt64 = 0
        /// How many keys reads have looked up in the table (for tests: a warm read looks up none).
        var keysReadFromTable = 0
    }

    let memory = GQLLocked(Memory())
    /// Held across each write transaction and the memory update after it; holds the byte sizes of the records
    /// (loaded on the first write under a byte budget, then kept up to date).
    let writeLock = GQLLocked<[RecordKey: Int]?>(nil)
    /// Pending read times past which a read writes them itself rather than waiting for the next write.
    static let readFlushThreshold = 4_096

    init(
        database: GQLDatabase, memoryLimit: Int, maximumBytes: Int? = nil,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) throws {
        self.database = database
        self.memoryLimit = max(memoryLimit, 0)
        self.maximumBytes = maximumBytes.map { max($0, 0) }
        self.clock = clock
        try Self.migrator.migrate(database)
        let isEmpty = try database.read { tx in
            var rows = 0
            try tx.forEachRow(sql: "SELECT 1 FROM \(Self.table) LIMIT 1", [], table: Self.table) { _ in rows += 1 }
            return rows == 0
        }
        memory.withLock { $0.isComplete = isEmpty }
    }

    /// The fields in column `index` of `row`: RecordCodec bytes, or JSON text (a row written before format 1);
    /// `nil` when they do not read (a damaged file: a miss, which the next answer rewrites).
    static func decode(_ row: GQLColumns, _ index: Int32) -> GQLValues? {
        decodeNotingDeadlines(row, index)?.fields
    }

    /// ``decode(_:_:)``, and whether the record holds a server's deadlines (``FieldExpiry/expiresMember``),
    /// seen while decoding rather than looked up after.
    static func decodeNotingDeadlines(_ row: GQLColumns, _ index: Int32)
        -> (fields: GQLValues, hasDeadlines: Bool)?
    {
        if let decoded = row.withBlob(index, { RecordCodec.decode($0, noting: FieldExpiry.expiresMember) }) {
            // A BLOB that does not decode is a miss (never read as text).
            return decoded.map { (fields: $0.fields, hasDeadlines: $0.hasNoted) }
        }
        // The text's bytes as stored: JSON that is not UTF-8 (a damaged file's) is refused, never repaired.
        guard case .object(let fields)? = row.withText(index, { try? GQLValue(jsonBytes: Array($0)) }) ?? nil
        else { return nil }
        return (fields, fields[FieldExpiry.expiresMember] != nil)
    }

    // MARK: Reading

    /// The records of `keys` that exist: from memory, the rest from SQLite.
    func load(_ keys: [RecordKey]) throws -> [RecordKey: GQLValues] {
        var found: [RecordKey: GQLValues] = [:]
        var missing: [RecordKey] = []
        let (generation, layers) = memory.withLock { memory -> (UInt64, [Layer]) in
            for key in keys {
                if let record = memory.records[key] { found[key] = record } else { missing.append(key) }
            }
            return (memory.generation, memory.layers)
        }
        if !missing.isEmpty {
            for (key, record) in try loadFromTable(missing, generation: generation) { found[key] = record }
        }
        try noteReadsUnderBudget(found.keys)
        if !layers.isEmpty { Self.overlay(layers, on: &found, keys: keys) }
        return found
    }

    /// The memory layer as it is now: its records (shared, not copied: a write made while a snapshot lives copies
    /// the memory layer's table once, so readers hold one only for the length of a read), its generation and the
    /// layers over it.
    struct Snapshot {
        var records: [RecordKey: GQLValues]
        var generation: UInt64
        /// ``Memory/trims`` when it was taken: the same generation and trims in a later snapshot mean records
        /// were only added in between.
        var trims: UInt64
        var layers: [Layer]
        /// The stamp of the last change noted (``ChangeLog``) when it was taken.
        var stamp: UInt64
        var mayHoldDeadlines: Bool
        /// ``Memory/isComplete``: a key the records lack is in no row of the table either.
        var isComplete: Bool
    }

    func snapshot() -> Snapshot {
        memory.withLock {
            Snapshot(
                records: $0.records, generation: $0.generation, trims: $0.trims, layers: $0.layers,
                stamp: $0.changes.stamp, mayHoldDeadlines: $0.mayHoldDeadlines, isComplete: $0.isComplete)
        }
    }

    /// Reads `keys` from the table; they join the memory layer when no write came in since the snapshot of
    /// `generation` was taken (so a row read before a write can never return over it).
    func loadFromTable(_ keys: [RecordKey], generation: UInt64) throws -> [(key: RecordKey, record: GQLValues)] {
        let records = try loadFromTableNotingJoin(keys, generation: generation).records
        return zip(keys, records).compactMap { key, record in record.map { (key, $0) } }
    }

    /// ``loadFromTable(_:generation:)`` with the records in the order of `keys` (``selectRows(_:_:hasDeadlines:)``:
    /// the record of `keys[i]` at `i`, `nil` when the table has none; a key given twice has its record at one of its
    /// places), and whether every row read joined the memory layer and stayed there (no write since the snapshot of
    /// `generation`, nothing trimmed while they joined).
    func loadFromTableNotingJoin(_ keys: [RecordKey], generation: UInt64) throws
        -> (records: [GQLValues?], joined: Bool)
    {
        var deadlines = false
        let loaded = try database.read { tx in try Self.selectRows(keys, tx, hasDeadlines: &deadlines) }
        let joined = memory.withLock { memory -> Bool in
            memory.keysReadFromTable += keys.count
            if deadlines { memory.mayHoldDeadlines = true }
            guard memory.generation == generation else { return false }
            memory.records.reserveCapacity(memory.records.count + loaded.lazy.filter { $0 != nil }.count)
            // With no write since, a record memory holds is the row just read: replacing it changes nothing.
            for (key, record) in zip(keys, loaded) { if let record { memory.records[key] = record } }
            let trims = memory.trims
            trim(&memory)
            return memory.trims == trims
        }
        return (loaded, joined)
    }

    /// Notes that `keys` were read, when there is a byte budget (otherwise no read times are kept).
    func noteReadsUnderBudget(_ keys: some Sequence<RecordKey>) throws {
        if maximumBytes != nil { try noteReads(keys) }
    }

    /// Every record's key in the table (for tests and tools), in the table's order; rows that are not records
    /// (``TableSizes``) are left out.
    func allKeys() throws -> [String] {
        try database.read { tx in
            var keys: [String] = []
            try tx.forEachRow(sql: "SELECT key FROM \(Self.table) ORDER BY key", [], table: Self.table) { row in
                if let key = row.recordKey(0) { keys.append(key.text) }
            }
            return keys
        }
    }

    // MARK: Writing

    /// Merges `records` field by field into the stored ones, in one transaction, and returns the keys of the
    /// records that changed (a field added or given another value).
    ///
    /// With `receivedAt` (expiry on), every field the records bring gets that receive time in the record's
    /// ``FieldExpiry/receivedMember``, and such a record is written even when no value changed; a new time
    /// alone is not a change. With `expiresAt` (the server's `Cache-Control: max-age`), every field they bring
    /// gets that deadline in ``FieldExpiry/expiresMember``; without it, a field they bring loses any deadline it
    /// had (the configuration's ages apply to it again).
    func merge(_ records: [RecordKey: GQLValues], receivedAt: Double? = nil, expiresAt: Double? = nil) throws
        -> Set<RecordKey>
    {
        try merge(records.map { (key: $0.key, fields: $0.value) }, receivedAt: receivedAt, expiresAt: expiresAt)
    }

    /// ``merge(_:receivedAt:expiresAt:)`` of records given as a list, each key once (a ``Normalizer``'s).
    func merge(_ records: NormalizedRecords, receivedAt: Double? = nil, expiresAt: Double? = nil) throws
        -> Set<RecordKey>
    {
        try mergeNotingGeneration(records, receivedAt: receivedAt, expiresAt: expiresAt).changed
    }

    /// ``merge(_:receivedAt:expiresAt:)``, and the stamp this write was noted with (``ChangeLog``):
    /// ``changed(_:after:upTo:)`` tells whether a later change touched the records a read of it holds.
    func mergeNotingGeneration(_ records: NormalizedRecords, receivedAt: Double? = nil, expiresAt: Double? = nil)
        throws -> (changed: Set<RecordKey>, generation: UInt64)
    {
        guard !records.isEmpty else { return ([], currentStamp) }
        return try writeLock.withLock { sizes in
            // Rows go in in key order. The table is a B-tree on the key: rows in hash order land all over it,
            // splitting pages everywhere (a fresh answer's file came out 3/4 full) and dirtying more pages than
            // SQLite's page cache holds, which it then spills to the WAL mid-transaction and writes again at the
            // commit (5.4 MB of WAL for a 2.9 MB table, CacheBench's answer); in order, each page fills and is
            // left behind (2.6 MB of WAL, 2.5 MB table), and a level's records read back from neighbouring pages.
            let order = Self.keyOrder(records)
            let keys = order.map { records[$0].key }
            let (cached, isComplete) = memory.withLock { memory in
                (keys.compactMap { key in memory.records[key].map { (key, $0) } }, memory.isComplete)
            }
            var current = Dictionary(uniqueKeysWithValues: cached)
            let now = clock()
            var written: [(key: RecordKey, record: GQLValues)] = []
            // The new records written, at their places in `records` (the order a read meets them): copied for the
            // memory layer in that order once the transaction has taken them (``ReadOrderCopy``).
            var fresh = [GQLValues?](repeating: nil, count: records.count)
            var changed: Set<RecordKey> = []
            changed.reserveCapacity(records.count)
            var hasDeadlines = false
            var newSizes: [(key: RecordKey, size: Int)] = []
            // Every record is encoded into this one buffer and bound from it in place.
            var buffer: [UInt8] = []
            var stamp: UInt64 = 0
            try writeWithReads { tx in
                let unknown = isComplete ? [] : keys.filter { current[$0] == nil }
                if !unknown.isEmpty { current.merge(try Self.select(unknown, tx)) { kept, _ in kept } }
                for position in order {
                    let (key, fields) = records[position]
                    let old = current.isEmpty ? nil : current[key]
                    var merged = old.map { $0.merging(fields) { _, new in new } } ?? fields
                    if let receivedAt {
                        var received = old?[FieldExpiry.receivedMember]?.objectValue ?? [:]
                        for field in fields.keys { received[field] = .double(receivedAt) }
                        merged[FieldExpiry.receivedMember] = .object(received)
                    }
                    var timed = receivedAt != nil
                    if expiresAt != nil || old?[FieldExpiry.expiresMember] != nil {
                        var deadlines = old?[FieldExpiry.expiresMember]?.objectValue ?? [:]
                        for field in fields.keys { deadlines[field] = expiresAt.map { .double($0) } }
                        merged[FieldExpiry.expiresMember] = deadlines.isEmpty ? nil : .object(deadlines)
                        timed = true
                        hasDeadlines = hasDeadlines || !deadlines.isEmpty
                    }
                    // Compared by bytes (`GQLValue`'s `==` holds canonically equivalent strings equal): a reference
                    // moving to a record whose key is the old one's in another encoding, or a string resent in
                    // another encoding, is a change.
                    let isChange =
                        old == nil
                        || fields.contains { field in
                            old?[field.key].map { !StoredValue.isIdentical($0, field.value) } ?? true
                        }
                    let rewritten = old.map { !StoredValue.isIdentical(.object(merged), .object($0)) } ?? true
                    guard isChange || (timed && rewritten) else { continue }
                    if isChange { changed.insert(key) }
                    // Throws for a value too deep to read back: the transaction rolls back, nothing is kept.
                    let count = try RecordCodec.encode(merged, key: key.text, into: &buffer)
                    _ = try buffer.withUnsafeBytes { bytes in
                        try tx.change(
                            sql: Self.upsert, [.string(key.text), .double(now)],
                            blob: UnsafeRawBufferPointer(rebasing: bytes[..<count]), table: Self.table)
                    }
                    if old == nil { fresh[position] = merged } else { written.append((key, merged)) }
                    if sizes != nil { newSizes.append((key, key.text.utf8.count + count)) }
                }
                stamp = noteChange(changed)  // Before the commit: see ``ChangeLog``.
            }
            for (key, size) in newSizes { sizes?[key] = size }
            // Only what the memory layer keeps is copied, and only records the codec took (no deeper than it reads).
            for (position, record) in fresh.enumerated() {
                if let record { written.append((records[position].key, ReadOrderCopy.copy(record))) }
            }
            memory.withLock { memory in
                memory.generation &+= 1
                if hasDeadlines { memory.mayHoldDeadlines = true }
                memory.records.reserveCapacity(memory.records.count + written.count)
                for (key, record) in written { memory.records[key] = record }
                trim(&memory)
            }
            if let maximumBytes {
                changed.formUnion(try trimToBudget(maximumBytes, &sizes))
            }
            return (changed, stamp)
        }
    }

    /// The places of `records` (each key once, a ``Normalizer``'s) in the table's key order: by their keys' UTF-8
    /// bytes, as SQLite orders TEXT keys (``SortedKeys``, which compares most keys as two numbers). String's `<`
    /// compares canonical Unicode order instead: the same for ASCII, another order for keys out of NFC
    /// (`"e\u{301}x"`, `"\u{e9}"`), which it normalizes to compare. No dearer than String's `<` on ASCII keys
    /// (CacheBench's write, callgrind: 259.6 M instructions either way; comparing each pair's bytes through `memcmp`
    /// cost 11 % more).
    static func keyOrder(_ records: NormalizedRecords) -> [Int] {
        let sorted = SortedKeys(records.map(\.key.text))
        // SortedKeys keeps a key given twice once: such a list (never a normalizer's) keeps its order.
        guard sorted.count == records.count else { return Array(records.indices) }
        return (0..<sorted.count).map { sorted.index($0) }
    }

    /// Writes one record (key, updated_at, fields: the bytes bound last), made once rather than per row.
    private static let upsert = """
        INSERT INTO \(table) (key, updated_at, fields) VALUES (?, ?, ?)
        ON CONFLICT(key) DO UPDATE SET fields = excluded.fields, updated_at = excluded.updated_at
        """

    /// Removes the records of `keys`; returns the keys that were there.
    func remove(_ keys: [RecordKey]) throws -> Set<RecordKey> {
        try writeLock.withLock { sizes in
            var removed: Set<RecordKey> = []
            try database.write { tx in
                for key in keys
                where try tx.change(
                    sql: "DELETE FROM \(Self.table) WHERE key = ?", [.string(key.text)], table: Self.table)
                    > 0
                {
                    removed.insert(key)
                }
                noteChange(removed)  // Before the commit: see ``ChangeLog``.
            }
            memory.withLock { memory in
                memory.generation &+= 1
                for key in keys { memory.records[key] = nil }
            }
            for key in removed { sizes?[key] = nil }
            return removed
        }
    }

    /// Removes every record.
    func removeAll() throws {
        try writeLock.withLock { sizes in
            try database.write { tx in
                _ = try tx.change(sql: "DELETE FROM \(Self.table)", [], table: Self.table)
                noteChange(nil)  // Before the commit: see ``ChangeLog``.
            }
            memory.withLock { memory in
                memory.generation &+= 1
                memory.records.removeAll()
                memory.isComplete = true
                memory.reads.removeAll()
                memory.layers.removeAll()
            }
            if sizes != nil { sizes = [:] }
        }
    }

    /// Drops half the memory layer when it holds more than ``memoryLimit`` records.
    func trim(_ memory: inout Memory) {
        guard memory.records.count > memoryLimit else { return }
        let drop = memory.records.count - memoryLimit / 2
        memory.isComplete = false
        memory.trims &+= 1
        for key in Array(memory.records.keys.prefix(drop)) { memory.records[key] = nil }
    }
}
