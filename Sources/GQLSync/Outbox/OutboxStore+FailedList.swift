import Foundation
import GQLCore
import GQLStore

/// The counts the status reports, and the failed list an app reads, retries and drops.
extension OutboxStore {
    /// The numbers of pending and set-aside items.
    func counts() throws -> (pending: Int, failed: Int) {
        let rows = try database.fetchAll(
            sql: "SELECT state, COUNT(*) AS n FROM \(Self.table) WHERE engine = ? AND state <> 'removed' GROUP BY state",
            [engine])
        var pending = 0
        var failed = 0
        for row in rows {
            let n = Int(row["n"]?.intValue ?? 0)
            if row["state"]?.stringValue == "failed" { failed = n } else { pending += n }
        }
        return (pending, failed)
    }

    /// The set-aside items, oldest first.
    func failedItems() throws -> [GQLSync.FailedItem] {
        let rows = try database.fetchAll(
            sql: """
                SELECT id, op, key, input, idempotency, nonce, attempts, error, failed_at FROM \(Self.table)
                WHERE engine = ? AND state = 'failed' ORDER BY id
                """, [engine])
        return try rows.map { row in
            let item = try self.item(row, in: database)
            let error = try row["error"]?.stringValue.map { try GQLSync.Failure(json: GQLValue(json: $0)) }
            let failedAt = row["failed_at"]?.stringValue.flatMap { try? GQLDate.date(from: $0) }
            return GQLSync.FailedItem(
                id: item.id, name: item.name, key: item.key, variables: item.variables, attempts: item.attempts,
                failure: error ?? GQLSync.Failure(message: "unknown"),
                failedAt: failedAt ?? Date(timeIntervalSince1970: 0))
        }
    }

    /// Puts a set-aside item back in the queue, at its place in call order. Whether there was one.
    func retry(_ id: Int64) throws -> Bool {
        let changed = try queueWrite { tx in
            try tx.execute(
                "UPDATE \(Self.table) SET state = 'pending', error = NULL, failed_at = NULL "
                    + "WHERE id = ? AND engine = ? AND state = 'failed'", [id, engine])
        }
        // The read-ahead is past it: the loop reads from the start again.
        if changed > 0 { journal?.invalidate() }
        return changed > 0
    }

    /// Deletes a set-aside item. Whether there was one.
    ///
    /// Only failed items can go: a pending one may be claimed by the delivery loop at any moment, and dropping
    /// it then would neither stop its send nor keep the counts right.
    func drop(_ id: Int64) throws -> Bool {
        try queueWrite { tx in
            let found = try tx.fetchAll(
                sql: "SELECT id FROM \(Self.table) WHERE id = ? AND engine = ? AND state = 'failed'", [id, engine])
            try delete(found.compactMap { $0["id"]?.intValue }, in: tx)
            return !found.isEmpty
        }
    }
}
