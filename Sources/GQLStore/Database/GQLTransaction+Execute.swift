import CSQLite
import GQLCore

extension GQLTransaction {
    /// Runs raw SQL inside the transaction and returns the number of rows it changed.
    ///
    /// ```swift
    /// try db.write { tx in try tx.execute("CREATE INDEX user_age ON User(age)") }
    /// ```
    @discardableResult
    public func execute(_ sql: String, _ arguments: GQLArguments = GQLArguments()) throws -> Int {
        let connection = try checkedConnection(write: true)
        defer {
            schemaCache.removeAll()
            database.schemaMayHaveChanged()
        }
        return try connection.execute(sql, arguments)
    }
}

extension GQLTransaction {
    /// Runs one write statement of a module's own tables, prepared once per connection, with `values` bound in
    /// order, and returns the rowid of the last row it inserted (`sqlite3_last_insert_rowid`); `table` names
    /// the table in its errors.
    ///
    /// Unlike ``execute(_:_:)`` it leaves the schema caches alone (the statement must not change a schema) and
    /// reads no rows back; GQLSync queues an item with it inside the app's writes.
    /// ```swift
    /// let id = try tx.insert(sql: "INSERT INTO _gqlsync_outbox (…) VALUES (?, ?)", [.string(engine), 1], table: "_gqlsync_outbox")
    /// ```
    package func insert(sql: String, _ values: [GQLValue], table: String) throws -> Int64 {
        let connection = try checkedConnection(write: true)
        try connection.run(sql, values, table: table)
        return sqlite3_last_insert_rowid(connection.handle)
    }

    /// ``insert(sql:_:table:)`` for an `INSERT … SELECT` that may select no row: the rowid of the row it
    /// inserted, or nil when it inserted none (`sqlite3_changes` is 0).
    ///
    /// GQLSync queues an item with it: the `SELECT` reads the item's operation, so an operation that is gone
    /// inserts nothing instead of an item that names a missing one.
    /// ```swift
    /// let id = try tx.insertIfSelected(sql: "INSERT INTO item (op) SELECT id FROM op WHERE id = ?", [7], table: "item")
    /// ```
    package func insertIfSelected(sql: String, _ values: [GQLValue], table: String) throws -> Int64? {
        let connection = try checkedConnection(write: true)
        try connection.run(sql, values, table: table)
        guard sqlite3_changes(connection.handle) > 0 else { return nil }
        return sqlite3_last_insert_rowid(connection.handle)
    }

    /// Runs one write statement of a module's own tables, prepared once per connection, with `values` bound in
    /// order, and returns how many rows it changed (`sqlite3_changes`); `table` names the table in its errors.
    ///
    /// Like ``insert(sql:_:table:)`` it leaves the schema caches alone and reads no rows back; GQLDevServer
    /// creates an item with it (`INSERT … ON CONFLICT DO NOTHING`: 0 when the key is taken).
    /// ```swift
    /// let created = try tx.change(sql: "INSERT INTO Note (id, text) VALUES (?, ?) ON CONFLICT DO NOTHING", ["n1", "hi"], table: "Note") > 0
    /// ```
    package func change(sql: String, _ values: [GQLValue], table: String) throws -> Int {
        let connection = try checkedConnection(write: true)
        try connection.run(sql, values, table: table)
        return Int(sqlite3_changes(connection.handle))
    }
}
