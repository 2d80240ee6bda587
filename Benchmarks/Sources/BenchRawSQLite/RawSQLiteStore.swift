import BenchKit
import BenchSQLite

/// The floor: one SQLite connection driven through the C API by hand.
///
/// Statements are prepared once per workload and reused with bind / step / reset. Observers are one TEMP trigger
/// `AFTER INSERT` holding one `SELECT bench_notify(observer, NEW.id) WHERE NEW.age > N` per observer, a C-level
/// function registered with `sqlite3_create_function_v2`; it buffers the event, and the buffer is delivered to
/// the sink after COMMIT returns (dropped on rollback) — the mechanism GQLStore's observers use.
public final class RawSQLiteStore: StoreImplementation {
    public let name = "raw C"
    public let details =
        "raw C: one connection (SQLITE_OPEN_NOMUTEX), prepare once + bind/step/reset (3b: inside BEGIN…COMMIT), "
        + "observers = one TEMP trigger, a SELECT … WHERE per observer calling a sqlite3_create_function_v2 "
        + "function, delivered after COMMIT"

    private var db: OpaquePointer?
    private var rows: [BenchData.Row] = []
    private var singles: [BenchData.Row] = []
    private var lookupKeys: [Int] = []
    private var thresholds: [Int] = []
    private var events: EventBuffer?
    private var fetched: [RawRow] = []

    public init() {}

    /// Row type the fetch workloads decode into.
    struct RawRow {
        var id: Int
        var name: String
        var age: Int
        var score: Double
        var active: Bool
        var note: String?
    }

    /// Events buffered by `bench_notify` during a transaction.
    final class EventBuffer {
        var observers: [Int32] = []
        var keys: [Int64] = []
    }

    public func prepare(_ data: BenchData, path: String) throws {
        rows = data.rows
        singles = data.autocommitRows
        lookupKeys = data.lookupKeys
        thresholds = data.observerThresholds
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK else {
            throw BenchError("raw: cannot open \(path): \(message())")
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=NORMAL")
        try exec(
            """
            CREATE TABLE "\(BenchData.tableName)" ("id" INTEGER PRIMARY KEY, "name" TEXT NOT NULL, \
            "age" INTEGER NOT NULL, "score" REAL NOT NULL, "active" INTEGER NOT NULL, "note" TEXT)
            """)
    }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func insert() throws -> Int {
        try exec("BEGIN IMMEDIATE")
        do {
            try insertEach(rows)
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
        try exec("COMMIT")
        return rows.count
    }

    /// One `sqlite3_step` per row outside any transaction: SQLite commits each on its own.
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func autocommitInsert() throws -> Int {
        try insertEach(singles)
        return singles.count
    }

    private func insertEach(_ rows: [BenchData.Row]) throws {
        let statement = try prepareStatement(
            """
            INSERT INTO "\(BenchData.tableName)" ("id", "name", "age", "score", "active", "note") \
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        defer { sqlite3_finalize(statement) }
        for row in rows {
            sqlite3_bind_int64(statement, 1, Int64(row.id))
            sqlite3_bind_text(statement, 2, row.name, -1, sqliteTransient)
            sqlite3_bind_int64(statement, 3, Int64(row.age))
            sqlite3_bind_double(statement, 4, row.score)
            sqlite3_bind_int(statement, 5, row.active ? 1 : 0)
            if let note = row.note {
                sqlite3_bind_text(statement, 6, note, -1, sqliteTransient)
            } else {
                sqlite3_bind_null(statement, 6)
            }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("raw: insert failed: \(message())") }
            sqlite3_reset(statement)
        }
    }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchAll() throws -> Int {
        try fetchEveryRow()
    }

    /// Raw C always reads its row by hand: the same loop as `fetchAll` (a method of its own, so that
    /// callgrind-store.sh can count each workload alone).
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchAllByRow() throws -> Int {
        byRowFetches += 1  // keeps the two methods distinct, so the optimizer does not fold one into the other
        return try fetchEveryRow()
    }

    private var byRowFetches = 0

    private func fetchEveryRow() throws -> Int {
        let statement = try prepareStatement(
            #"SELECT "id", "name", "age", "score", "active", "note" FROM "\#(BenchData.tableName)""#)
        defer { sqlite3_finalize(statement) }
        var result: [RawRow] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw BenchError("raw: fetchAll failed: \(message())") }
            result.append(decodeRow(statement))
        }
        fetched = result
        return result.count
    }

    public func fetchedRows() -> [BenchData.Row] {
        fetched.map {
            BenchData.Row(id: $0.id, name: $0.name, age: $0.age, score: $0.score, active: $0.active, note: $0.note)
        }
    }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchOne() throws -> Int {
        try lookUpEach()
    }

    /// The same loop inside one read transaction (`BEGIN` … `COMMIT`), as the libraries' one read access: without
    /// it every `sqlite3_step` in autocommit mode opens and closes a read transaction of its own (WAL read lock,
    /// wal-index check), which is workload 3's cost, not the floor of 3b.
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchOneInRead() throws -> Int {
        try exec("BEGIN")
        do {
            let sum = try lookUpEach()
            try exec("COMMIT")
            return sum
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    private func lookUpEach() throws -> Int {
        let statement = try prepareStatement(
            #"SELECT "id", "name", "age", "score", "active", "note" FROM "\#(BenchData.tableName)" WHERE "id" = ?"#)
        defer { sqlite3_finalize(statement) }
        var found: [RawRow] = []
        found.reserveCapacity(lookupKeys.count)
        for key in lookupKeys {
            sqlite3_bind_int64(statement, 1, Int64(key))
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else { throw BenchError("raw: no row for key \(key): \(message())") }
            found.append(decodeRow(statement))
            sqlite3_reset(statement)
        }
        fetched = found
        return found.reduce(0) { $0 + $1.age }
    }

    public func registerObservers(_ sink: NotificationSink) throws {
        let buffer = EventBuffer()
        events = buffer
        self.sink = sink
        let userData = Unmanaged.passUnretained(buffer).toOpaque()
        let code = sqlite3_create_function_v2(
            db, "bench_notify", 2, SQLITE_UTF8, userData,
            { context, _, arguments in
                guard let context, let arguments else { return }
                let buffer = Unmanaged<EventBuffer>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
                buffer.observers.append(sqlite3_value_int(arguments[0]))
                buffer.keys.append(sqlite3_value_int64(arguments[1]))
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw BenchError("raw: create_function failed: \(message())") }
        // One trigger holding one `SELECT … WHERE` per observer: one trigger program per row however many
        // observers there are (ten triggers with a `WHEN` each cost ten programs per row).
        let selects = thresholds.enumerated().map { index, threshold in
            #"SELECT bench_notify(\#(index), NEW."id") WHERE NEW."age" > \#(threshold);"#
        }
        try exec(
            #"CREATE TEMP TRIGGER "bench_observers" AFTER INSERT ON "\#(BenchData.tableName)" FOR EACH ROW BEGIN "#
                + selects.joined(separator: " ") + " END")
    }

    private var sink: NotificationSink?

    public func observedInsert() throws -> Int {
        guard let events, let sink else { throw BenchError("raw: observers not registered") }
        events.observers.removeAll(keepingCapacity: true)
        events.keys.removeAll(keepingCapacity: true)
        do {
            _ = try insert()
        } catch {
            events.observers.removeAll()
            events.keys.removeAll()
            throw error
        }
        // After COMMIT: deliver, one callback per event (the key is what an app's callback would receive).
        for (observer, key) in zip(events.observers, events.keys) {
            deliver(sink, observer: Int(observer), key: key)
        }
        return rows.count
    }

    @inline(never)
    private func deliver(_ sink: NotificationSink, observer: Int, key: Int64) {
        sink.record(observer)
    }

    public func close() throws {
        if db != nil {
            sqlite3_close_v2(db)
            db = nil
        }
        events = nil
        sink = nil
    }

    // MARK: - Helpers

    private func decodeRow(_ statement: OpaquePointer) -> RawRow {
        RawRow(
            id: Int(sqlite3_column_int64(statement, 0)),
            name: text(statement, 1) ?? "",
            age: Int(sqlite3_column_int64(statement, 2)),
            score: sqlite3_column_double(statement, 3),
            active: sqlite3_column_int(statement, 4) != 0,
            note: text(statement, 5))
    }

    @inline(__always)
    private func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    private func prepareStatement(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw BenchError("raw: cannot prepare \(sql): \(message())") }
        return statement
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("raw: \(sql) failed: \(message())")
        }
    }

    private func message() -> String {
        db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "no connection"
    }
}

/// SQLITE_TRANSIENT is a macro and is not imported into Swift.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The journal mode recorded in a database file, read through a separate read-only connection
/// (WAL is persistent, so this checks every implementation the same way from outside).
public func journalMode(ofFile path: String) -> String? {
    var db: OpaquePointer?
    defer { sqlite3_close_v2(db) }
    guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return nil }
    var statement: OpaquePointer?
    defer { sqlite3_finalize(statement) }
    guard sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &statement, nil) == SQLITE_OK,
        sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0)
    else { return nil }
    return String(cString: text)
}
