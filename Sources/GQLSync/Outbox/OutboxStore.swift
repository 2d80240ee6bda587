import Foundation
import GQLCore
import GQLStore

/// The outbox's rows in SQLite: enqueue (with lazy merging), claim in call order, complete, set aside.
///
/// Every engine's items live in one table, `_gqlsync_outbox`, told apart by the engine's name, so several
/// engines can share a database. All statements are bound; the table is versioned by a namespaced
/// ``GQLMigrator`` (`gqlsync`), independent of the app's own migrations.
struct OutboxStore: Sendable {
    static let table = "_gqlsync_outbox"
    static let cursorTable = "_gqlsync_cursors"
    static let namespace = "gqlsync"

    let database: GQLDatabase
    let engine: String

    /// The migrator of the outbox's tables.
    static var migrator: GQLMigrator {
        var migrator = GQLMigrator(namespace: namespace)
        migrator.step(1, "outbox") { tx in
            try tx.execute(
                """
                CREATE TABLE \(table) (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    engine TEXT NOT NULL,
                    mode TEXT NOT NULL,
                    name TEXT NOT NULL,
                    key TEXT,
                    query TEXT NOT NULL,
                    input TEXT NOT NULL,
                    wrap TEXT,
                    idempotency TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    state TEXT NOT NULL DEFAULT 'pending',
                    error TEXT,
                    created_at TEXT NOT NULL,
                    failed_at TEXT
                )
                """)
            try tx.execute("CREATE INDEX \(table)_queue ON \(table)(engine, state, id)")
            try tx.execute("CREATE INDEX \(table)_key ON \(table)(engine, key, id)")
        }
        migrator.step(2, "pull cursors") { tx in
            try tx.execute(
                """
                CREATE TABLE \(cursorTable) (
                    engine TEXT NOT NULL,
                    query TEXT NOT NULL,
                    started_at INTEGER NOT NULL,
                    taken_at INTEGER NOT NULL,
                    PRIMARY KEY (engine, query)
                )
                """)
        }
        return migrator
    }

    /// Opens the outbox of `engine` in `database`, creating or upgrading its table.
    init(database: GQLDatabase, engine: String) throws {
        self.database = database
        self.engine = engine
        _ = try Self.migrator.migrate(database)
    }

    // MARK: Enqueue

    /// What an enqueue did.
    enum Enqueued: Sendable, Equatable {
        /// A new item with this id.
        case inserted(Int64)
        /// The values were merged into the unsent item with this id.
        case merged(Int64)

        var id: Int64 {
            switch self {
            case .inserted(let id), .merged(let id): id
            }
        }
    }

    /// Adds a call to the outbox inside `tx`.
    ///
    /// A `lazy` call merges into the newest item for the same key when that item is a lazy call of the same
    /// operation that was never handed to the network (`attempts = 0`) and not set aside; newer fields win,
    /// earlier fields are kept. Otherwise — another item for the key came after it, or it has been tried — the
    /// call becomes a new item behind it, so no value is ever marked sent without being sent.
    func enqueue(
        _ mode: OutboxMode, name: String, query: String, values: GQLValues, key: GQLValue?, wrap: String?,
        in tx: GQLTransaction
    ) throws -> Enqueued {
        let keyText = try key.map { try $0.jsonString() }
        if mode == .lazy, let keyText,
            let last = try tx.fetchAll(
                sql: """
                    SELECT id, mode, name, state, attempts, input, wrap FROM \(Self.table)
                    WHERE engine = ? AND key = ? ORDER BY id DESC LIMIT 1
                    """, [engine, keyText]
            ).first,
            last["mode"]?.stringValue == OutboxMode.lazy.rawValue, last["name"]?.stringValue == name,
            last["state"]?.stringValue == "pending", last["attempts"]?.intValue == 0,
            last["wrap"]?.stringValue == wrap, let id = last["id"]?.intValue
        {
            let earlier = try Self.decodeObject(last["input"]?.stringValue, id: id)
            let merged = earlier.merging(values) { _, newer in newer }
            // Statements through fetchAll (with RETURNING) are prepared once per connection and leave the
            // store's schema cache alone; tx.execute would do neither, and cost the app's next write a recheck.
            _ = try tx.fetchAll(
                sql: "UPDATE \(Self.table) SET input = ? WHERE id = ? RETURNING id",
                [try GQLValue.object(merged).jsonString(), id])
            return .merged(id)
        }
        let inserted = try tx.fetchRows(
            sql: """
                INSERT INTO \(Self.table) (engine, mode, name, key, query, input, wrap, idempotency, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """,
            [
                engine, mode.rawValue, name, keyText, query, try GQLValue.object(values).jsonString(), wrap,
                Self.newIdempotencyKey(), GQLDate.string(from: Date()),
            ])
        guard let id = inserted.rows.first?.first?.intValue else {
            throw GQLError(.sqlite, "the new outbox item has no id", table: Self.table, operation: "enqueue")
        }
        return .inserted(id)
    }

    // MARK: Delivery

    /// In one transaction: removes the delivered items, sets aside the failed ones, then claims up to `limit`
    /// pending items in call order, counting an attempt for each before it is sent.
    ///
    /// Counting the attempt first is what makes lazy merging safe: once an item may have reached the server, a
    /// later lazy call cannot merge into it.
    func advance(remove: [Int64], setAside: [(Int64, GQLSync.Failure)], claim limit: Int) async throws
        -> [OutboxItem]
    {
        let engine = engine
        return try await database.write { tx in
            for id in remove {
                _ = try tx.fetchAll(sql: "DELETE FROM \(Self.table) WHERE id = ? RETURNING id", [id])
            }
            for (id, failure) in setAside {
                _ = try tx.fetchAll(
                    sql: "UPDATE \(Self.table) SET state = 'failed', error = ?, failed_at = ? WHERE id = ? RETURNING id",
                    [try failure.jsonValue.jsonString(), GQLDate.string(from: Date()), id])
            }
            guard limit > 0 else { return [] }
            let rows = try tx.fetchAll(
                sql: """
                    SELECT id, name, key, query, input, wrap, idempotency, attempts FROM \(Self.table)
                    WHERE engine = ? AND state = 'pending' ORDER BY id LIMIT ?
                    """, [engine, limit])
            var items: [OutboxItem] = []
            for row in rows {
                var item = try Self.item(row)
                item.attempts += 1
                _ = try tx.fetchAll(
                    sql: "UPDATE \(Self.table) SET attempts = ? WHERE id = ? RETURNING id", [item.attempts, item.id])
                items.append(item)
            }
            return items
        }
    }

    /// Replaces an item's values and idempotency key (a conflict resolved by resending other values).
    func replaceValues(_ id: Int64, _ values: GQLValues) throws {
        try database.write { tx in
            try tx.execute(
                "UPDATE \(Self.table) SET input = ?, idempotency = ? WHERE id = ?",
                [try GQLValue.object(values).jsonString(), Self.newIdempotencyKey(), id])
        }
    }

    // MARK: Counts and the failed list

    /// The numbers of pending and set-aside items.
    func counts() throws -> (pending: Int, failed: Int) {
        let rows = try database.fetchAll(
            sql: "SELECT state, COUNT(*) AS n FROM \(Self.table) WHERE engine = ? GROUP BY state", [engine])
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
                SELECT id, name, key, query, input, wrap, idempotency, attempts, error, failed_at FROM \(Self.table)
                WHERE engine = ? AND state = 'failed' ORDER BY id
                """, [engine])
        return try rows.map { row in
            let item = try Self.item(row)
            let error = try row["error"]?.stringValue.map { try GQLSync.Failure(json: GQLValue(json: $0)) }
            let failedAt = row["failed_at"]?.stringValue.flatMap { try? GQLDate.date(from: $0) }
            return GQLSync.FailedItem(
                id: item.id, name: item.name, key: item.key, variables: item.variables, attempts: item.attempts,
                failure: error ?? GQLSync.Failure(message: "unknown"), failedAt: failedAt ?? Date(timeIntervalSince1970: 0))
        }
    }

    /// Puts a set-aside item back in the queue, at its place in call order. Whether there was one.
    func retry(_ id: Int64) throws -> Bool {
        try database.write { tx in
            try tx.execute(
                "UPDATE \(Self.table) SET state = 'pending', error = NULL, failed_at = NULL "
                    + "WHERE id = ? AND engine = ? AND state = 'failed'", [id, engine])
        } > 0
    }

    /// Deletes a set-aside item. Whether there was one.
    ///
    /// Only failed items can go: a pending one may be claimed by the delivery loop at any moment, and dropping
    /// it then would neither stop its send nor keep the counts right.
    func drop(_ id: Int64) throws -> Bool {
        try database.write { tx in
            try tx.execute(
                "DELETE FROM \(Self.table) WHERE id = ? AND engine = ? AND state = 'failed'", [id, engine])
        } > 0
    }

    // MARK: Rows

    static func item(_ row: GQLValues) throws -> OutboxItem {
        guard let id = row["id"]?.intValue, let name = row["name"]?.stringValue,
            let query = row["query"]?.stringValue, let idempotency = row["idempotency"]?.stringValue
        else {
            throw GQLError(.decoding, "an outbox row lacks its id, name, query or idempotency key", table: table)
        }
        let key = try row["key"]?.stringValue.map { try GQLValue(json: $0) }
        return OutboxItem(
            id: id, name: name, key: key, query: query, values: try decodeObject(row["input"]?.stringValue, id: id),
            wrap: row["wrap"]?.stringValue, idempotencyKey: idempotency, attempts: Int(row["attempts"]?.intValue ?? 0))
    }

    static func decodeObject(_ text: String?, id: Int64) throws -> GQLValues {
        guard let text, case .object(let values) = try GQLValue(json: text) else {
            throw GQLError(.decoding, "outbox item \(id) has no JSON object of values", table: table)
        }
        return values
    }

    static func newIdempotencyKey() -> String { UUID().uuidString.lowercased() }
}
