import BenchKit
import BenchSQLite
import GQLCore

/// The pull's floor: a page's items written through SQLite's C API by hand, in one transaction per page, on one
/// connection of its own: the upsert and the delete prepared once, then bind / step / reset per item. The same
/// file settings as the store (WAL, `synchronous = NORMAL`), the same rows, nothing else (no outbox look-up, no
/// version check, no observers).
final class RawPageWriter {
    private var db: OpaquePointer?
    private var upsert: OpaquePointer?
    private var delete: OpaquePointer?
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK else {
            let reason = message()
            sqlite3_close_v2(db)
            throw BenchError("raw pull: cannot open \(path): \(reason)")
        }
        do {
            try exec("PRAGMA journal_mode=WAL")
            try exec("PRAGMA synchronous=NORMAL")
            upsert = try prepare(
                """
                INSERT INTO "Objects" ("objectId", "text", "number", "_version") VALUES (?, ?, ?, ?)
                ON CONFLICT("objectId") DO UPDATE SET "text" = excluded."text", "number" = excluded."number",
                "_version" = excluded."_version"
                """)
            delete = try prepare(#"DELETE FROM "Objects" WHERE "objectId" = ?"#)
        } catch {
            try? close()
            throw error
        }
    }

    deinit { try? close() }

    /// Writes a page's items in one transaction: each upserted, or deleted when it is a tombstone.
    func write(_ items: [GQLValue]) throws {
        try exec("BEGIN IMMEDIATE")
        do {
            for item in items {
                guard let key = item["objectId"] else { continue }
                let statement = item["_deleted"]?.boolValue == true ? delete : upsert
                try bind(key, at: 1, in: statement)
                if statement == upsert {
                    try bind(item["text"] ?? .null, at: 2, in: statement)
                    try bind(item["number"] ?? .null, at: 3, in: statement)
                    try bind(item["_version"] ?? .null, at: 4, in: statement)
                }
                let rc = sqlite3_step(statement)
                sqlite3_reset(statement)
                guard rc == SQLITE_DONE else { throw BenchError("raw pull: a write failed: \(message())") }
            }
            try exec("COMMIT")
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    /// Finalizes the statements and closes the connection (every page is committed by then).
    func close() throws {
        sqlite3_finalize(upsert)
        sqlite3_finalize(delete)
        (upsert, delete) = (nil, nil)
        guard let db else { return }
        self.db = nil
        guard sqlite3_close_v2(db) == SQLITE_OK else { throw BenchError("raw pull: cannot close the file") }
    }

    private func bind(_ value: GQLValue, at index: Int32, in statement: OpaquePointer?) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(statement, index)
        case .bool(let flag): rc = sqlite3_bind_int64(statement, index, flag ? 1 : 0)
        case .int(let number): rc = sqlite3_bind_int64(statement, index, number)
        case .double(let number): rc = sqlite3_bind_double(statement, index, number)
        case .string(let text): rc = sqlite3_bind_text(statement, index, text, -1, Self.transient)
        default: throw BenchError("raw pull: a \(value.kindName) where a column value was expected")
        }
        guard rc == SQLITE_OK else { throw BenchError("raw pull: cannot bind a value: \(message())") }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK else {
            throw BenchError("raw pull: cannot prepare \(sql): \(message())")
        }
        return statement
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("raw pull: \(sql) failed: \(message())")
        }
    }

    private func message() -> String { db.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection" }
}
