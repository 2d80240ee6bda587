import BenchKit
import BenchSQLite
import GQLCore

/// The write's floor: the answer's records inserted as rows by hand, through SQLite's C API, in one transaction on
/// a connection of its own — a table per type (`User`, `Post`, `Comment`) with a column per scalar field and the
/// id of each referenced object, statements prepared once and reused (bind / step / reset), users upserted as
/// they recur. The same file settings as the cache's database (WAL, `synchronous = NORMAL`); no JSON written, no
/// merge with what was there, no watchers.
final class RawFeedWriter {
    private var db: OpaquePointer?
    private var statements: [OpaquePointer?] = []
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String) throws {
        guard
            sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
                == SQLITE_OK
        else {
            let reason = message()
            sqlite3_close_v2(db)
            throw BenchError("raw write: cannot open \(path): \(reason)")
        }
        do {
            try exec("PRAGMA journal_mode=WAL")
            try exec("PRAGMA synchronous=NORMAL")
            try exec(
                """
                CREATE TABLE User (id TEXT PRIMARY KEY NOT NULL, name TEXT, avatarUrl TEXT);
                CREATE TABLE Post (id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT, createdAt TEXT, likes INTEGER,
                    author TEXT);
                CREATE TABLE Comment (id TEXT PRIMARY KEY NOT NULL, post TEXT, body TEXT, createdAt TEXT, author TEXT);
                """)
            for sql in [
                "INSERT OR REPLACE INTO User (id, name, avatarUrl) VALUES (?, ?, ?)",
                "INSERT OR REPLACE INTO Post (id, title, body, createdAt, likes, author) VALUES (?, ?, ?, ?, ?, ?)",
                "INSERT OR REPLACE INTO Comment (id, post, body, createdAt, author) VALUES (?, ?, ?, ?, ?)",
            ] {
                var statement: OpaquePointer?
                guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK
                else { throw BenchError("raw write: cannot prepare \(sql): \(message())") }
                statements.append(statement)
            }
        } catch {
            try? close()
            throw error
        }
    }

    deinit { try? close() }

    /// Inserts the records of `data` (the feed's `data`) in one transaction.
    func write(_ data: GQLValue) throws {
        guard case .array(let posts)? = data["posts"] else { throw BenchError("raw write: no posts in the answer") }
        try exec("BEGIN IMMEDIATE")
        do {
            for post in posts {
                let author = try user(post["author"])
                try step(1, [post["id"], post["title"], post["body"], post["createdAt"], post["likes"], author])
                for comment in post["comments"]?.arrayValue ?? [] {
                    let commenter = try user(comment["author"])
                    try step(2, [comment["id"], post["id"], comment["body"], comment["createdAt"], commenter])
                }
            }
            try exec("COMMIT")
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    /// Upserts a user's row; returns its id.
    private func user(_ user: GQLValue?) throws -> GQLValue? {
        guard let user else { return nil }
        try step(0, [user["id"], user["name"], user["avatarUrl"]])
        return user["id"]
    }

    /// The rows in each table (for the check after the clock stops).
    func counts() throws -> (users: Int, posts: Int, comments: Int) {
        func count(_ table: String) throws -> Int {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, "SELECT count(*) FROM \(table)", -1, &statement, nil) == SQLITE_OK,
                sqlite3_step(statement) == SQLITE_ROW
            else {
                sqlite3_finalize(statement)
                throw BenchError("raw write: cannot count \(table): \(message())")
            }
            defer { sqlite3_finalize(statement) }
            return Int(sqlite3_column_int64(statement, 0))
        }
        return (try count("User"), try count("Post"), try count("Comment"))
    }

    func close() throws {
        for statement in statements { sqlite3_finalize(statement) }
        statements = []
        guard let db else { return }
        self.db = nil
        guard sqlite3_close_v2(db) == SQLITE_OK else { throw BenchError("raw write: cannot close the file") }
    }

    private func step(_ index: Int, _ values: [GQLValue?]) throws {
        let statement = statements[index]
        for (position, value) in values.enumerated() {
            let column = Int32(position + 1)
            let rc: Int32
            switch value ?? .null {
            case .null: rc = sqlite3_bind_null(statement, column)
            case .int(let number): rc = sqlite3_bind_int64(statement, column, Int64(number))
            case .string(let text): rc = sqlite3_bind_text(statement, column, text, -1, Self.transient)
            default: throw BenchError("raw write: an unexpected value in column \(column)")
            }
            guard rc == SQLITE_OK else { throw BenchError("raw write: cannot bind a value: \(message())") }
        }
        let rc = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard rc == SQLITE_DONE else { throw BenchError("raw write: an insert failed: \(message())") }
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("raw write: \(sql.prefix(40)) failed: \(message())")
        }
    }

    private func message() -> String { db.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection" }
}
