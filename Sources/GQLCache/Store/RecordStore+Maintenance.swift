import Foundation
import GQLCore
import GQLStore

/// Read times, the byte budget, garbage collection and statistics of the record table.
extension RecordStore {
    // MARK: Read times

    /// Notes that `keys` were read now. Only the memory layer changes: the times reach `read_at` with the next
    /// write, or in one transaction of their own once ``readFlushThreshold`` of them wait.
    func noteReads(_ keys: some Sequence<RecordKey>) throws {
        let now = clock()
        let flush = memory.withLock { memory -> Bool in
            for key in keys { memory.reads[key] = now }
            return memory.reads.count >= Self.readFlushThreshold
        }
        guard flush else { return }
        try writeLock.withLock { _ in try writeWithReads { _ in } }
    }

    /// A write transaction (called with the write lock held) that first writes the read times waiting in the
    /// memory layer, taken out of it. When it throws (it rolled back: a value too deep to store, a full disk),
    /// the times are put back, a time noted since winning, so a later write still records them and the byte
    /// budget still spares those records.
    func writeWithReads<T>(_ body: (GQLTransaction) throws -> T) throws -> T {
        let reads = memory.withLock { memory in
            defer { memory.reads.removeAll() }
            return memory.reads
        }
        do {
            return try database.write { tx in
                try Self.writeReads(reads, tx)
                return try body(tx)
            }
        } catch {
            memory.withLock { memory in memory.reads.merge(reads) { noted, _ in noted } }
            throw error
        }
    }

    private static func writeReads(_ reads: [RecordKey: Double], _ tx: GQLTransaction) throws {
        for (key, time) in reads {
            _ = try tx.change(
                sql: "UPDATE \(table) SET read_at = ? WHERE key = ?", [.double(time), .string(key.text)], table: table)
        }
    }

    // MARK: Byte budget

    /// Past `budget` bytes, removes the least recently used records (the later of its last read and its last
    /// write) until the table holds at most 90% of it, so a full cache does not trim on every write. Called
    /// with the write lock held; returns the keys removed.
    ///
    /// The first call reads the sizes from the table, and removes the rows that are not records (a damaged
    /// file's, see ``TableSizes``): they count towards the budget, can never be read, and no write of the
    /// cache's would ever replace them.
    func trimToBudget(_ budget: Int, _ sizes: inout [RecordKey: Int]?) throws -> Set<RecordKey> {
        var known: [RecordKey: Int]
        if let sizes {
            known = sizes
        } else {
            let table = try database.read { tx in try Self.sizes(tx) }
            if table.damagedRows > 0 { _ = try database.write { tx in try Self.removeDamaged(tx) } }
            known = table.records
        }
        defer { sizes = known }
        var total = known.values.reduce(0, +)
        guard total > budget else { return [] }
        let target = budget / 10 * 9
        var victims: [RecordKey] = []
        try writeWithReads { tx in
            try tx.forEachRow(
                sql: "SELECT key FROM \(Self.table) ORDER BY max(updated_at, IFNULL(read_at, 0)), key", [],
                table: Self.table
            ) { row in
                guard total > target, let key = row.recordKey(0) else { return }
                total -= known[key] ?? 0
                victims.append(key)
            }
            for key in victims {
                _ = try tx.change(
                    sql: "DELETE FROM \(Self.table) WHERE key = ?", [.string(key.text)], table: Self.table)
            }
            noteChange(Set(victims))  // Before the commit: see ``ChangeLog``.
        }
        let removed = Set(victims)
        forget(removed)
        for key in victims { known[key] = nil }
        return removed
    }

    /// Drops `keys` from the memory layer after they left the table.
    private func forget(_ keys: Set<RecordKey>) {
        memory.withLock { memory in
            memory.generation &+= 1
            for key in keys {
                memory.records[key] = nil
                memory.reads[key] = nil
            }
        }
    }

    // MARK: Garbage collection

    /// What ``collectGarbage(roots:)`` did.
    struct Collected {
        /// Records removed: unreachable from the roots, or unreadable.
        var removed: Set<RecordKey> = []
        /// Rows removed that were not records (a damaged file's, see ``TableSizes``).
        var damagedRows = 0
        /// Records that lost a field holding a reference to a record that does not exist.
        var changed: Set<RecordKey> = []
        /// How many such fields were removed.
        var danglingFields = 0
    }

    /// Removes, in one transaction, every field that refers to a missing record (a list counts as one field),
    /// then every record no chain of references from `roots` reaches, and every row that is not a record.
    func collectGarbage(roots: [RecordKey]) throws -> Collected {
        try writeLock.withLock { sizes in
            var collected = Collected()
            var written: [RecordKey: GQLValues] = [:]
            try writeWithReads { tx in
                var records: [RecordKey: GQLValues] = [:]
                var unreadable: [RecordKey] = []
                collected.damagedRows = try Self.removeDamaged(tx)
                try tx.forEachRow(sql: "SELECT key, fields FROM \(Self.table)", [], table: Self.table) { row in
                    guard let key = row.recordKey(0) else { return }
                    guard let fields = Self.decode(row, 1) else {
                        unreadable.append(key)
                        return
                    }
                    records[key] = fields
                }
                for (key, fields) in records {
                    var kept = fields
                    for (name, value) in fields {
                        var dangling = false
                        StoredValue.references(in: value) { if records[RecordKey($0)] == nil { dangling = true } }
                        guard dangling else { continue }
                        kept[name] = nil
                        if case .object(var received)? = kept[FieldExpiry.receivedMember] {
                            received[name] = nil
                            kept[FieldExpiry.receivedMember] = .object(received)
                        }
                        collected.danglingFields += 1
                    }
                    if kept != fields { written[key] = kept }
                }
                records.merge(written) { _, kept in kept }
                var reached = Set(roots.filter { records[$0] != nil })
                var queue = Array(reached)
                while let key = queue.popLast() {
                    for value in records[key].map({ Array($0.values) }) ?? [] {
                        StoredValue.references(in: value) { text in
                            let target = RecordKey(text)
                            if records[target] != nil, reached.insert(target).inserted { queue.append(target) }
                        }
                    }
                }
                collected.removed = Set(records.keys).subtracting(reached).union(unreadable)
                for key in collected.removed {
                    written[key] = nil
                    _ = try tx.change(
                        sql: "DELETE FROM \(Self.table) WHERE key = ?", [.string(key.text)], table: Self.table)
                }
                for (key, fields) in written {
                    let bytes = try RecordCodec.encode(fields, key: key.text)
                    _ = try tx.change(
                        sql: "UPDATE \(Self.table) SET fields = ? WHERE key = ?",
                        [.data(Data(bytes)), .string(key.text)], table: Self.table)
                    sizes?[key] = key.text.utf8.count + bytes.count
                }
                noteChange(collected.removed.union(written.keys))  // Before the commit: see ``ChangeLog``.
            }
            collected.changed = Set(written.keys)
            forget(collected.removed)
            let deadlines = written.values.contains { $0[FieldExpiry.expiresMember] != nil }
            memory.withLock { memory in
                if deadlines { memory.mayHoldDeadlines = true }
                for (key, fields) in written { memory.records[key] = fields }
            }
            for key in collected.removed { sizes?[key] = nil }
            return collected
        }
    }

    // MARK: Statistics

    /// The size of every record, and of the rows that are not records, read from the table (pending read times
    /// are left pending).
    func recordSizes() throws -> TableSizes {
        try database.read { tx in try Self.sizes(tx) }
    }
}
