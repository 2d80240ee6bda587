import GQLCore

extension GQLCache {
    /// What ``gc()`` removed.
    public struct GarbageCollection: Sendable, Hashable {
        /// Records no chain of references from the query root reached (and rows whose fields did not read).
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
    /// brought stay while a query's answer holds them. Watchers of what changed read again.
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
            removedRecords: collected.removed.count, removedReferences: collected.danglingFields)
    }

    /// The size of the cache, for tools (`gql-cli cache stats`).
    public struct Statistics: Sendable, Hashable {
        /// How many records the table holds.
        public var records: Int
        /// Their keys' UTF-8 bytes and stored fields' bytes (what ``Configuration/maximumBytes`` counts).
        public var bytes: Int
        /// Records by type: the type name of keyed records (`User`), `QUERY_ROOT` and the other roots, and
        /// `(nested)` for objects stored under their parent's path.
        public var types: [String: Int]

        public init(records: Int, bytes: Int, types: [String: Int]) {
            self.records = records
            self.bytes = bytes
            self.types = types
        }
    }

    /// Counts the records in the table and their bytes.
    ///
    /// ```swift
    /// let stats = try cache.statistics()
    /// print("\(stats.records) records, \(stats.bytes) bytes")
    /// ```
    public func statistics() throws -> Statistics {
        let sizes = try store.recordSizes()
        var types: [String: Int] = [:]
        for key in sizes.keys { types[CacheKey.kind(of: key.text), default: 0] += 1 }
        return Statistics(records: sizes.count, bytes: sizes.values.reduce(0, +), types: types)
    }
}
