import GQLCore
import GQLStore

/// How a read finds its records in the table: a forward walk in key order (``selectRows(_:_:hasDeadlines:)``).
extension RecordStore {
    /// Reads `keys` from the table, at most ``batchSize`` keys per statement, in key order.
    static func select(_ keys: [RecordKey], _ tx: GQLTransaction) throws -> [RecordKey: GQLValues] {
        var deadlines = false
        var records: [RecordKey: GQLValues] = [:]
        for (key, record) in zip(keys, try selectRows(keys, tx, hasDeadlines: &deadlines)) {
            if let record { records[key] = record }
        }
        return records
    }

    /// Walks the table's text keys forward in key order (its primary key's) from the key bound; SQLite sorts a BLOB
    /// key (a damaged file's) after every text key, so the bound `x''` leaves them out and the walk ends.
    static let selectFrom = "SELECT key, fields FROM \(table) WHERE key >= ? AND key < x'' ORDER BY key"

    /// Most rows a walk steps over in a row, none of them wanted, before it seeks the next wanted key instead: a
    /// step costs SQLite a few hundred instructions, a seek from the B-tree's root about 2,500 and starting the
    /// statement again about as much.
    static let stepsBeforeSeek = 8

    /// The rows of ``select(_:_:)`` as a list (no table of them is made) in the order of `keys`: the record of
    /// `keys[i]` at `i`, `nil` when the table has none (or its row is damaged). A key given more than once has its
    /// record at one of its places, the others `nil`, so a caller that joins the records to a table adds each once.
    /// Sets `hasDeadlines` when a record read holds a server's deadlines.
    ///
    /// A caller that read the keys from records (the next level of a cold read) takes each record from its place,
    /// without looking its key up in a table again.
    ///
    /// The keys are sorted by their UTF-8 bytes (SQLite's order for the primary key) and the table is walked
    /// forward from the first: a row whose key is the next one wanted is taken, a row between wanted keys is
    /// stepped over, and after ``stepsBeforeSeek`` such rows in a row (fewer where the keys lie apart) the walk
    /// seeks the next wanted key. The records of one answer lie close together in key order (a type's records
    /// are neighbours), so most are reached by a step rather than by a seek from the root; keys not in the table
    /// are passed by as the walk goes beyond them. Records of one type come together, which
    /// ``RecordCodec/Names`` relies on.
    ///
    /// SQLite's part and the decoding run one after the other, not row by row: up to ``batchSize`` rows' bytes
    /// are copied out as the statement steps, then decoded in one loop (so the copies held at once are one
    /// batch's, not the whole read's). Alternating SQLite's code and the decoder's for each row made each evict
    /// the other from the processor's instruction cache.
    static func selectRows(_ keys: [RecordKey], _ tx: GQLTransaction, hasDeadlines: inout Bool) throws
        -> [GQLValues?]
    {
        var records = [GQLValues?](repeating: nil, count: keys.count)
        let wanted = SortedKeys(keys.map(\.text))
        var copied = CopiedRows(capacity: min(keys.count, batchSize))
        // The place in `wanted` of the next key to find.
        var next = 0
        // Unwanted rows a walk steps over before it seeks: halved after a walk that took fewer rows than that
        // (the keys lie apart, as a small answer's do in a large cache, and steps would cost more than seeks),
        // back to the most after one that took more.
        var allowance = stepsBeforeSeek
        while next < wanted.count {
            var passed = 0
            var taken = 0
            let from: [GQLValue] = [.string(keys[wanted.index(next)].text)]
            let finished = try tx.forEachRowWhile(sql: selectFrom, from, table: table) { row in
                // Keys before the row's are not in the table; a row before the next key is not wanted.
                guard row.withText(0, { wanted.advance(&next, to: $0) }) == .equal else {
                    passed += 1
                    return next < wanted.count && passed <= allowance
                }
                passed = 0
                taken += 1
                let index = wanted.index(next)
                next += 1
                if row.withBlob(1, { copied.copy(index, $0) }) != nil {
                    if copied.count == batchSize { copied.decode(into: &records) }
                } else if let decoded = decodeNotingDeadlines(row, 1) {
                    // JSON text (a row written before format 1): rare, decoded at once.
                    records[index] = decoded.fields
                    if decoded.hasDeadlines { copied.sawDeadlines = true }
                }
                return next < wanted.count
            }
            // The table ended: no key left is in it.
            if finished { break }
            allowance = taken < allowance ? max(allowance / 2, 1) : stepsBeforeSeek
        }
        copied.decode(into: &records)
        if copied.sawDeadlines { hasDeadlines = true }
        return records
    }

    /// Rows' bytes copied out of SQLite as a statement steps, decoded a batch at a time
    /// (``selectRows(_:_:hasDeadlines:)``).
    struct CopiedRows {
        /// The rows copied and not decoded yet: their keys' places among the keys read, and where their bytes end
        /// in `bytes` (each starts where the one before ends).
        private var rows: [(index: Int, end: Int)] = []
        private var bytes: [UInt8] = []
        private var names = RecordCodec.Names()
        /// Whether a record decoded holds a server's deadlines.
        var sawDeadlines = false

        init(capacity: Int) {
            rows.reserveCapacity(capacity)
            bytes.reserveCapacity(capacity * 256)
        }

        /// How many rows are copied and not decoded yet.
        var count: Int { rows.count }

        /// Copies the bytes of the row of the key at `index`.
        mutating func copy(_ index: Int, _ blob: UnsafeRawBufferPointer) {
            // Typed as bytes, so the append is one copy of the block (a raw buffer is appended byte by byte).
            bytes.append(contentsOf: blob.assumingMemoryBound(to: UInt8.self))
            rows.append((index, bytes.count))
        }

        /// Decodes the rows copied since the last call into `records` (each at its key's place), then empties the
        /// copies for the next batch. A row that does not decode is a miss (never read as text).
        mutating func decode(into records: inout [GQLValues?]) {
            var names = self.names
            self.names = RecordCodec.Names()  // one reference while decoding: no copy when a name changes
            var sawDeadlines = false
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                for (index, end) in rows {
                    defer { offset = end }
                    guard
                        let decoded = RecordCodec.decode(
                            UnsafeRawBufferPointer(rebasing: buffer[offset..<end]),
                            noting: FieldExpiry.expiresMember, names: &names)
                    else { continue }
                    records[index] = decoded.fields
                    if decoded.hasNoted { sawDeadlines = true }
                }
            }
            self.names = names
            if sawDeadlines { self.sawDeadlines = true }
            rows.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
        }
    }
}
