import GQLCore
import GQLStore

/// The pull cursors (one per engine, query and variables) and the keys the outbox shields from server rows.
extension OutboxStore {
    /// Where a query's last pull left off: the server's `startedAt`, and when (local time, ms since 1970) it
    /// was taken.
    struct Cursor: Sendable, Equatable {
        var startedAt: Int64
        var takenAt: Int64
    }

    /// The text a pull's variables key its cursor by: their JSON with members sorted (the same variables give the
    /// same text whatever their order), `""` for none (the key of every cursor kept before step 8).
    static func cursorVariables(_ variables: GQLValues) throws -> String {
        variables.isEmpty ? "" : try GQLValue.object(variables).jsonString(sortedKeys: true)
    }

    /// The cursor of `query` pulled with `variables` (``cursorVariables(_:)``), or `nil` before its first complete
    /// pull.
    func cursor(_ query: String, variables: String) throws -> Cursor? {
        let row = try database.fetchAll(
            sql: """
                SELECT started_at, taken_at FROM \(Self.cursorTable) WHERE engine = ? AND query = ? AND variables = ?
                """,
            [engine, query, variables]
        ).first
        guard let startedAt = row?["started_at"]?.intValue, let takenAt = row?["taken_at"]?.intValue else {
            return nil
        }
        return Cursor(startedAt: startedAt, takenAt: takenAt)
    }

    /// Every cursor of the engine, by query and then variables.
    func cursors() throws -> [GQLSync.PullCursor] {
        try Self.cursors(in: database, engine: engine)
    }

    /// Every cursor of `engine` in `database`, by query and then variables; read only, so a look at a file can use
    /// it. `keyedByVariables`: false for a file before step 8, whose cursors have no variables (all `""`).
    static func cursors(
        in database: GQLDatabase, engine: String, keyedByVariables: Bool = true
    ) throws -> [GQLSync.PullCursor] {
        let variables = keyedByVariables ? "variables" : "'' AS variables"
        return try database.fetchAll(
            sql: """
                SELECT query, \(variables), started_at FROM \(cursorTable) WHERE engine = ?
                ORDER BY query, variables
                """, [engine]
        ).compactMap { row in
            guard let query = row["query"]?.stringValue, let variables = row["variables"]?.stringValue,
                let startedAt = row["started_at"]?.intValue
            else { return nil }
            return GQLSync.PullCursor(query: query, variables: variables, startedAt: startedAt)
        }
    }

    /// Stores the cursor of `query` pulled with `variables` inside `tx`, a write on the outbox's database.
    func setCursor(_ query: String, variables: String, _ cursor: Cursor, in tx: GQLTransaction) throws {
        try tx.execute(
            """
            INSERT INTO \(Self.cursorTable) (engine, query, variables, started_at, taken_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(engine, query, variables)
            DO UPDATE SET started_at = excluded.started_at, taken_at = excluded.taken_at
            """, [engine, query, variables, cursor.startedAt, cursor.takenAt])
    }

    /// Forgets the cursor of `query` pulled with `variables`, or with any variables when `variables` is nil, so
    /// the next such pull is a base pull.
    func removeCursor(_ query: String, variables: String?) throws {
        if let variables {
            try database.execute(
                "DELETE FROM \(Self.cursorTable) WHERE engine = ? AND query = ? AND variables = ?",
                [engine, query, variables])
        } else {
            try database.execute("DELETE FROM \(Self.cursorTable) WHERE engine = ? AND query = ?", [engine, query])
        }
    }

    /// The keys (``ServerRows/keyText(_:)``) of every item still in the outbox, pending or set aside: server rows
    /// for them are not written, so the local change wins until it is sent or dropped.
    func unsentKeys(in context: some GQLDatabaseContext) throws -> Set<String> {
        // Items the journal records as delivered are still rows until the next consolidation: not unsent.
        let delivered = journal?.recorded ?? []
        return keys(
            try context.fetchRows(
                sql: "SELECT DISTINCT id, key FROM \(Self.table) WHERE engine = ? AND key IS NOT NULL", [engine]),
            skipping: delivered)
    }

    /// The keys of the items queued after item `id`.
    func unsentKeys(after id: Int64, in context: some GQLDatabaseContext) throws -> Set<String> {
        keys(
            try context.fetchRows(
                sql: "SELECT DISTINCT id, key FROM \(Self.table) WHERE engine = ? AND id > ? AND key IS NOT NULL",
                [engine, id]),
            skipping: journal?.recorded ?? [])
    }

    private func keys(_ rows: GQLRows, skipping delivered: Set<Int64>) -> Set<String> {
        var keys = Set<String>()
        for row in rows.rows {
            guard row.count == 2, let id = row[0].intValue, !delivered.contains(id), let json = row[1].stringValue,
                let key = try? GQLValue(json: json)
            else { continue }
            if let text = ServerRows.keyText(key) { keys.insert(text) }
        }
        return keys
    }
}
