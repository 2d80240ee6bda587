import GQLCore

extension GQLCache {
    /// What ``gc()`` removed.
    public struct GarbageCollection: Sendable, Hashable {
        /// Records no chain of references from the query root reached, rows whose fields did not read, and rows
        /// that were not records (a damaged file's: a key that is not text, or not valid UTF-8).
        public var removedRecords: Int
        /// Fields removed because they referred to a record that no longer exists.
        public var removedReferences: Int

        public init(removedRecords: Int, removedReferences: Int) {
            self.removedRecords = removedRecords
            self.removedReferences = removedReferences
        }
    }

    /// Removes every field that refers to a missing record (an evicted one, say), then every record that no
    /// query can reach any more: none of the chains of references from `QUERY_ROOT` leads to it. Answers of
    /// mutations and subscriptions (`MUTATION_ROOT`, `SUBSCRIPTION_ROOT`) are not roots: the objects they
    /// brought stay while a query's answer holds them. Watchers of what changed read again. In a damaged file,
    /// rows whose fields do not read and rows that are not records (a key that is not text, or text that is not
    /// valid UTF-8, which no read can reach) are removed too, and counted in
    /// ``GarbageCollection/removedRecords``.
    ///
    /// ```swift
    /// let report = try cache.gc()
    /// print(report.removedRecords, report.removedReferences)
    /// ```
    @discardableResult
    public func gc() throws -> GarbageCollection {
        let collected = try store.collectGarbage(roots: [RecordKey(CacheKey.queryRoot)])
        watchers.notify(collected.removed.union(collected.changed))
        return GarbageCollection(
            removedRecords: collected.removed.count + collected.damagedRows,
            removedReferences: collected.danglingFields)
    }

    /// The size of the cache, for tools (`gql-cli cache stats`).
    public struct Statistics: Sendable, Hashable {
        /// How many records the table holds (rows whose key is valid UTF-8 text; a record whose fields do not
        /// read counts until ``GQLCache/gc()`` removes it).
        public var records: Int
        /// The bytes of every row: keys (as UTF-8) and stored fields, of the records and of the damaged rows
        /// (what ``Configuration/maximumBytes`` counts).
        public var bytes: Int
        /// Records by type: the type name of keyed records (`User`), `QUERY_ROOT` and the other roots, and
        /// `(nested)` for objects stored under their parent's path.
        public var types: [String: Int]
        /// Rows that are not records (a damaged or altered file's: a key that is not text, or text that is not
        /// valid UTF-8): no read reaches them; ``GQLCache/gc()``, ``GQLCache/clear()`` and the first trim to
        /// the byte budget remove them.
        public var damagedRows: Int

        public init(records: Int, bytes: Int, types: [String: Int], damagedRows: Int = 0) {
            self.records = records
            self.bytes = bytes
            self.types = types
            self.damagedRows = damagedRows
        }
    }

    /// Counts the records in the table and their bytes, and the rows that are not records.
    ///
    /// ```swift
    /// let stats = try cache.statistics()
    /// print("\(stats.records) records, \(stats.bytes) bytes")
    /// ```
    public func statistics() throws -> Statistics {
        let sizes = try store.recordSizes()
        var types: [String: Int] = [:]
        for key in sizes.records.keys { types[CacheKey.kind(of: key.text), default: 0] += 1 }
        return Statistics(
            records: sizes.records.count, bytes: sizes.records.values.reduce(0, +) + sizes.damagedBytes,
            types: types, damagedRows: sizes.damagedRows)
    }
}
