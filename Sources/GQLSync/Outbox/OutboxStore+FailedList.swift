import Foundation
import GQLCore
import GQLStore

/// The counts the status reports, and the failed list an app reads, retries and drops.
extension OutboxStore {
    /// The numbers of pending and set-aside items.
    func counts() throws -> (pending: Int, failed: Int) {
        // Items in other states are set aside at open (``setAsideUnknownStates(_:engine:)``), or edited in since.
        let counts = try Self.counts(in: database, engine: engine)
        return (counts.pending, counts.failed)
    }

    /// The numbers of `engine`'s pending and set-aside items in `database`, and of its items in a state the engine
    /// does not know (which an engine sets aside when it opens); read only, so a look at a file can use it.
    static func counts(in database: GQLDatabase, engine: String) throws -> (pending: Int, failed: Int, unknown: Int) {
        let rows = try database.fetchAll(
            sql: "SELECT state, COUNT(*) AS n FROM \(table) WHERE engine = ? AND state <> 'removed' GROUP BY state",
            [engine])
        var counts = (pending: 0, failed: 0, unknown: 0)
        for row in rows {
            let n = Int(row["n"]?.intValue ?? 0)
            switch row["state"]?.stringValue {
            case "failed": counts.failed = n
            case "pending": counts.pending = n
            default: counts.unknown += n
            }
        }
        return counts
    }

    /// The set-aside items, oldest first.
    func failedItems() throws -> [GQLSync.FailedItem] {
        let rows = try database.fetchAll(
            sql: """
                SELECT id, op, key, input, idempotency, nonce, attempts, error, failed_at FROM \(Self.table)
                WHERE engine = ? AND state = 'failed' ORDER BY id
                """, [engine])
        return try rows.map { row in
            let item = try self.item(OutboxRow(row), in: database)
            let error = row["error"]?.stringValue.map { text in
                // A reason that cannot be read does not hide the item (nor the others) from the list.
                (try? GQLSync.Failure(json: GQLValue(json: text)))
                    ?? GQLSync.Failure(
                        message: "outbox item \(item.id)'s stored failure cannot be read: \(text.prefix(200))")
            }
            let failedAt = row["failed_at"]?.stringValue.flatMap { try? GQLDate.date(from: $0) }
            return GQLSync.FailedItem(
                id: item.id, name: item.name, key: item.key, variables: try item.variables(), attempts: item.attempts,
                failure: error ?? GQLSync.Failure(message: "unknown"),
                failedAt: failedAt ?? Date(timeIntervalSince1970: 0))
        }
    }

    /// Sets aside the engine's items in a state the engine does not know (a file edited by hand, or by a later
    /// version): counted neither pending nor failed, they would sit unseen; failed, they are listed, and can be
    /// retried or dropped.
    static func setAsideUnknownStates(_ tx: GQLTransaction, engine: String) throws {
        _ = try tx.fetchAll(
            sql: """
                UPDATE \(table) SET error = json_object('message', 'the item was in the unknown state ' || quote(state)),
                    state = 'failed', failed_at = ?
                WHERE engine = ? AND state NOT IN ('pending', 'failed', 'removed') RETURNING id
                """, [GQLDate.string(from: Date()), engine])
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
                sql: "SELECT id, key FROM \(Self.table) WHERE id = ? AND engine = ? AND state = 'failed'", [id, engine])
            try delete(found.compactMap { $0["id"]?.intValue }, in: tx)
            // While the item waited, pulls kept the server's row for its key out (the local change wins until it is
            // sent) and moved their cursors on; dropped, the change will never be sent, so the next pull of every
            // query is a base pull, which writes the server's row over it.
            if found.contains(where: { !($0["key"]?.isNull ?? true) }) {
                try tx.execute("DELETE FROM \(Self.cursorTable) WHERE engine = ?", [engine])
            }
            return !found.isEmpty
        }
    }
}
