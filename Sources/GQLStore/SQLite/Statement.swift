import CSQLite
import Foundation
import GQLCore

/// A prepared statement. Owned by its ``Connection`` and used only by whoever holds that connection.
///
/// It keeps no reference to the connection: only the raw handle (valid while the statement exists, since
/// SQLite keeps a closed connection's memory until its last statement is finalized) and, on the writer, the
/// session it reports to.
final class Statement {
    let stmt: OpaquePointer
    /// The connection's handle, for its autocommit state and error messages.
    private let db: OpaquePointer
    private let session: WriteSession?
    let sql: String
    private var names: [String: Int32]?
    private var started = false
    /// The encoder that binds objects into this statement, kept for reuse.
    var binder: BindingEncoder?

    init(_ stmt: OpaquePointer, connection: Connection, sql: String) {
        self.stmt = stmt
        self.db = connection.handle
        self.session = connection.session
        self.sql = sql
    }

    /// A ``GQLError`` from the connection's error state, with this statement's SQL.
    func error(_ rc: Int32, table: String? = nil) -> GQLError {
        Connection.error(db, rc, sql: sql, table: table)
    }

    deinit { sqlite3_finalize(stmt) }

    var columnCount: Int32 { sqlite3_column_count(stmt) }

    func columnName(_ index: Int32) -> String { String(cString: sqlite3_column_name(stmt, index)) }

    /// Column index by result-column name, built once per statement.
    func columnIndex(_ name: String) -> Int32? {
        if let names { return names[name] }
        var map: [String: Int32] = [:]
        for i in 0..<columnCount where map[columnName(i)] == nil { map[columnName(i)] = i }
        names = map
        return map[name]
    }

    /// Advances to the next row; `false` when done. Throws SQLite's error with this statement's SQL.
    @inline(__always)
    func step() throws -> Bool {
        if !started {
            if let session {
                if session.requiresTransaction && sqlite3_get_autocommit(db) != 0 {
                    // SQLite ended the transaction itself (OR ROLLBACK, a full disk…): running on would commit
                    // this statement on its own, outside the write that is still in progress.
                    throw GQLError(
                        .sqlite, "the write's transaction was rolled back by SQLite; the rest of the write is refused",
                        sql: sql)
                }
                session.statementStarted()
            }
            started = true
            // Only the SQL text is logged: bound values may be secrets.
            if Connection.log.isVerbose { Connection.log.debug("SQL: \(sql)") }
        }
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE {
            session?.statementDone(autocommit: sqlite3_get_autocommit(db) != 0)
            return false
        }
        let error = error(rc)
        started = false
        sqlite3_reset(stmt)
        session?.statementFailed()
        throw error
    }

    /// Ends the statement's read or write, so a reader's snapshot is released. Bindings stay: every use
    /// binds all parameters again.
    @inline(__always)
    func reset() {
        started = false
        sqlite3_reset(stmt)
    }

    // MARK: Binding

    func bind(_ arguments: GQLArguments) throws {
        let count = Int(sqlite3_bind_parameter_count(stmt))
        if arguments.named.isEmpty {
            guard arguments.positional.count == count else {
                throw GQLError(
                    .invalidArgument,
                    "the SQL has \(count) parameter(s) but \(arguments.positional.count) argument(s) were given",
                    sql: sql)
            }
            for (i, value) in arguments.positional.enumerated() { try bind(value, at: Int32(i + 1)) }
            return
        }
        guard arguments.positional.isEmpty else {
            throw GQLError(.invalidArgument, "pass either positional or named arguments, not both", sql: sql)
        }
        try bindNamed(arguments.named)
    }

    var parameterCount: Int32 { sqlite3_bind_parameter_count(stmt) }

    /// Binds named parameters (`:name`, `@name`, `$name`; keys with or without the prefix), starting after
    /// the first `skipping` parameters.
    func bindNamed(_ named: [String: GQLValue], skipping: Int = 0) throws {
        let count = Int(parameterCount)
        var used = Set<String>()
        for index in stride(from: skipping + 1, through: count, by: 1) {
            guard let cName = sqlite3_bind_parameter_name(stmt, Int32(index)) else {
                throw GQLError(
                    .invalidArgument, "parameter \(index) is a '?': pass positional arguments", sql: sql)
            }
            let name = String(cString: cName)
            let bare = String(name.dropFirst())
            if let value = named[name] {
                used.insert(name)
                try bind(value, at: Int32(index))
            } else if let value = named[bare] {
                used.insert(bare)
                try bind(value, at: Int32(index))
            } else {
                throw GQLError(.invalidArgument, "no value for the SQL parameter \(name)", sql: sql)
            }
        }
        let extra = named.keys.filter { !used.contains($0) }.sorted()
        if !extra.isEmpty {
            throw GQLError(
                .invalidArgument, "the SQL has no parameter named \(extra.joined(separator: ", "))", sql: sql)
        }
    }

    /// Binds `bytes` as a BLOB at `index` without copying them (`SQLITE_STATIC`): SQLite reads them where they
    /// are, so they must stay valid until the statement has run and ``unbind(at:)`` has replaced them.
    func bindInPlace(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        let rc =
            if let base = bytes.baseAddress, !bytes.isEmpty {
                sqlite3_bind_blob(stmt, index, base, Int32(bytes.count), nil)
            } else {
                sqlite3_bind_zeroblob(stmt, index, 0)
            }
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// Binds NULL at `index` (in place of bytes bound by ``bindInPlace(_:at:)``).
    func unbind(at index: Int32) { sqlite3_bind_null(stmt, index) }

    @inline(__always)
    func bind(_ value: GQLValue, at index: Int32) throws {
        try Self.bind(value, at: index, to: stmt, sql: sql)
    }

    /// Binds `value` to parameter `index` of `stmt`, whose SQL is `sql`.
    @inline(__always)
    static func bind(_ value: GQLValue, at index: Int32, to stmt: OpaquePointer, sql: String) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(stmt, index)
        case .bool(let b): rc = sqlite3_bind_int64(stmt, index, b ? 1 : 0)
        case .int(let i): rc = sqlite3_bind_int64(stmt, index, i)
        case .double(let d):
            guard d.isFinite else {
                throw GQLError(.invalidValue, "cannot store the number \(d) (parameter \(index))", sql: sql)
            }
            rc = sqlite3_bind_double(stmt, index, d)
        case .string(let s):
            var s = s
            rc = s.withUTF8 { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    // A NULL pointer would bind SQL NULL; an empty string needs a real (empty) buffer.
                    guard let base = chars.baseAddress else {
                        return sqlite3_bind_text(stmt, index, "", 0, SQLITE_TRANSIENT)
                    }
                    return sqlite3_bind_text(stmt, index, base, Int32(chars.count), SQLITE_TRANSIENT)
                }
            }
        case .data(let d):
            rc = d.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    return sqlite3_bind_zeroblob(stmt, index, 0)
                }
                return sqlite3_bind_blob(stmt, index, base, Int32(buffer.count), SQLITE_TRANSIENT)
            }
        case .array, .object:
            let text = try value.jsonString()
            rc = sqlite3_bind_text(stmt, index, text, -1, SQLITE_TRANSIENT)
        }
        guard rc == SQLITE_OK else { throw Connection.error(sqlite3_db_handle(stmt), rc, sql: sql) }
    }

    // MARK: Reading

    @inline(__always)
    func type(at index: Int32) -> Int32 { sqlite3_column_type(stmt, index) }

    func value(at index: Int32) -> GQLValue {
        switch sqlite3_column_type(stmt, index) {
        case SQLITE_INTEGER: return .int(sqlite3_column_int64(stmt, index))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(stmt, index))
        case SQLITE_TEXT: return .string(text(at: index))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(stmt, index))
            guard count > 0, let bytes = sqlite3_column_blob(stmt, index) else { return .data(Data()) }
            return .data(Data(bytes: bytes, count: count))
        default: return .null
        }
    }

    @inline(__always)
    func text(at index: Int32) -> String {
        guard let chars = sqlite3_column_text(stmt, index) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, index))
        return String(decoding: UnsafeBufferPointer(start: chars, count: count), as: UTF8.self)
    }

    /// The current row as a dictionary of column name to value.
    func row() -> GQLValues {
        var row = GQLValues(minimumCapacity: Int(columnCount))
        for i in 0..<columnCount { row[columnName(i)] = value(at: i) }
        return row
    }
}
