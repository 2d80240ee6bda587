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

    /// ``change(sql:_:table:)`` with `blob` bound as a BLOB after `values` (parameter `values.count + 1`), read
    /// by SQLite where it lies rather than copied into a `Data` and again into SQLite first: GQLCache writes each
    /// record's encoded bytes from one reused buffer with it. SQLite holds no pointer to `blob` after it returns.
    /// ```swift
    /// try bytes.withUnsafeBytes { try tx.change(sql: "INSERT INTO t (key, bytes) VALUES (?, ?)", ["k"], blob: $0, table: "t") }
    /// ```
    package func change(sql: String, _ values: [GQLValue], blob: UnsafeRawBufferPointer, table: String) throws -> Int {
        let connection = try checkedConnection(write: true)
        try connection.run(sql, values, blob: blob, table: table)
        return Int(sqlite3_changes(connection.handle))
    }
}

extension GQLDatabaseContext {
    /// Runs one statement of a module's own tables (a `SELECT`, or inside a write transaction a write with
    /// `RETURNING`), prepared once per connection, with `values` bound in order, and hands each row to `body` to
    /// read by column position; `table` (when given) names the table in its errors. On a ``GQLDatabase`` it reads on
    /// a connection of the reader pool, as ``fetchAll(sql:_:)`` does; on a transaction, on the transaction's.
    ///
    /// No dictionary, and no ``GQLValue`` for a column read as a number or text: GQLSync's delivery loop reads its
    /// next items with it, where ``GQLDatabaseContext/fetchAll(sql:_:)``'s dictionaries cost about a microsecond a
    /// row, and GQLDevServer writes a `getT` answer straight from the columns. A row is valid only inside `body`.
    /// ```swift
    /// try tx.forEachRow(sql: "SELECT id, input FROM item WHERE id > ?", [0], table: "item") { row in
    ///     print(row.integer(0) ?? 0, row.text(1) ?? "")
    /// }
    /// ```
    package func forEachRow(
        sql: String, _ values: [GQLValue], table: String?, _ body: (GQLColumns) throws -> Void
    ) throws {
        try withReadConnection { connection in
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            for (i, value) in values.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
            do {
                while try statement.step() { try body(GQLColumns(statement: statement)) }
            } catch var error as GQLError {
                error.table = error.table ?? table
                throw error
            }
        }
    }
}

extension GQLDatabaseContext {
    /// ``forEachRow(sql:_:table:_:)`` that stops at the first row for which `body` returns `false`: the statement
    /// is reset there and SQLite reads no row past it. Returns whether every row was read (`body` never said
    /// stop). GQLCache walks its table forward from a key with it, and stops once it has the rows it wanted.
    /// ```swift
    /// var ids: [Int64] = []
    /// try tx.forEachRowWhile(sql: "SELECT id FROM item WHERE id >= ? ORDER BY id", [100], table: "item") { row in
    ///     ids.append(row.integer(0) ?? 0)
    ///     return ids.count < 10
    /// }
    /// ```
    @discardableResult
    package func forEachRowWhile(
        sql: String, _ values: [GQLValue], table: String?, _ body: (GQLColumns) throws -> Bool
    ) throws -> Bool {
        try withReadConnection { connection in
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            for (i, value) in values.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
            do {
                while try statement.step() {
                    guard try body(GQLColumns(statement: statement)) else { return false }
                }
                return true
            } catch var error as GQLError {
                error.table = error.table ?? table
                throw error
            }
        }
    }
}

/// The current row of ``GQLDatabaseContext/forEachRow(sql:_:table:_:)``, read by column position (from 0).
package struct GQLColumns {
    fileprivate let statement: Statement

    /// The column as an integer; `nil` when it holds anything else (SQL `NULL`, text, a real number, a blob).
    package func integer(_ index: Int32) -> Int64? {
        statement.type(at: index) == SQLITE_INTEGER ? sqlite3_column_int64(statement.stmt, index) : nil
    }

    /// The column as text; `nil` when it holds anything else.
    package func text(_ index: Int32) -> String? {
        statement.type(at: index) == SQLITE_TEXT ? statement.text(at: index) : nil
    }

    /// Calls `body` with the bytes of a BLOB column, valid only inside `body` (no copy is made); `nil` when the
    /// column holds anything else.
    package func withBlob<R>(_ index: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard statement.type(at: index) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(statement.stmt, index))
        guard count > 0, let bytes = sqlite3_column_blob(statement.stmt, index) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The column as a value, whatever it holds.
    package func value(_ index: Int32) -> GQLValue { statement.value(at: index) }

    /// What a column of the current row holds (SQLite's storage class of the value, not the declared type).
    package enum Kind: Sendable {
        case null, integer, real, text, blob
    }

    /// What the column holds.
    package func kind(_ index: Int32) -> Kind {
        switch statement.type(at: index) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// The column as a real number; `nil` when it holds anything else (an integer included).
    package func real(_ index: Int32) -> Double? {
        statement.type(at: index) == SQLITE_FLOAT ? sqlite3_column_double(statement.stmt, index) : nil
    }

    /// Calls `body` with the bytes of a TEXT column that are all ASCII (below 0x80, so valid UTF-8 as they stand; no
    /// copy is made), valid only inside `body`, and returns what it returns; `false`, without calling it, when the
    /// column holds anything else or text with a byte of 0x80 or more. Not generic, unlike ``withText(_:_:)``, so a
    /// caller in another module pays no generic metadata per column (a row's answer reads several).
    package func withASCIIText(_ index: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        guard let bytes = asciiText(index) else { return false }
        return body(bytes)
    }

    /// The byte count of a TEXT column whose bytes are all ASCII (what its `String`'s `utf8.count` is); `nil` when
    /// the column holds anything else or text with a byte of 0x80 or more.
    package func asciiTextCount(_ index: Int32) -> Int? {
        asciiText(index)?.count
    }

    private func asciiText(_ index: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard statement.type(at: index) == SQLITE_TEXT else { return nil }
        // The text first, then its length: SQLite's documented order.
        let chars = sqlite3_column_text(statement.stmt, index)
        let count = Int(sqlite3_column_bytes(statement.stmt, index))
        guard count > 0, let chars else { return UnsafeBufferPointer(start: nil, count: 0) }
        let bytes = UnsafeBufferPointer(start: chars, count: count)
        // Eight bytes at a time while they last: a high bit anywhere marks a byte that is not ASCII.
        let raw = UnsafeRawPointer(chars)
        var high: UInt64 = 0
        var i = 0
        while i + 8 <= count {
            high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0 ? bytes : nil
    }

    /// Calls `body` with the UTF-8 bytes of a TEXT column as SQLite holds them (not checked to be valid UTF-8; no
    /// copy is made), valid only inside `body`; `nil` when the column holds anything else.
    package func withText<R>(_ index: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        guard statement.type(at: index) == SQLITE_TEXT else { return nil }
        // The text first, then its length: SQLite's documented order.
        let chars = sqlite3_column_text(statement.stmt, index)
        let count = Int(sqlite3_column_bytes(statement.stmt, index))
        guard count > 0, let chars else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: chars, count: count))
    }
}
