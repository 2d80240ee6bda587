import BenchKit
import GRDB

/// GRDB 7.10.0 the idiomatic way: a Codable record type with FetchableRecord & PersistableRecord, a
/// `DatabasePool` (WAL; GRDB sets synchronous=NORMAL itself) or a `DatabaseQueue` with `journalMode = .wal`.
///
/// Record paths use only the record API — `insert(db)` (GRDB caches its statement per connection), `fetchAll(db)` —
/// never `db.execute(sql:)`. Lookups two ways, labelled: as GRDB's users write them (`BenchRecord.fetchOne(db,
/// key:)` in a `read { }` of its own, like one `BenchRow.fetchOne(db, key:)` in GQLStore), and as GRDB's
/// documentation recommends for speed (one `read { }` around all of them, a statement from the connection's cache,
/// `fetchOne(statement, arguments:)`).
///
/// Observers: 10 `TransactionObserver`s, each `observes(eventsOfKind:)` → `.insert(tableName:)`. GRDB's
/// `DatabaseEvent` only carries the rowid, so the condition `age > N` is applied to the row in one of two ways:
/// - built with `SQLITE_ENABLE_PREUPDATE_HOOK=1` (GRDB's own switch, see Package.swift): the observer reads
///   `age` from the `DatabasePreUpdateEvent`'s final values as the row is inserted, keeps matching keys, and
///   delivers them in `databaseDidCommit` — the cheapest faithful equivalent of GQLStore's trigger + WHEN;
/// - otherwise: the observer buffers inserted rowids and, in `databaseDidCommit`, reads each row's `age` with
///   a cached statement before delivering (what an app must do without the preupdate hook; noticeably slower).
/// Delivery is synchronous in `databaseDidCommit` (after COMMIT, before `write` returns), one sink call per key.
public final class GRDBStore: StoreImplementation {
    public enum Mode: String, Sendable { case pool, queue }

    public let name = "GRDB"
    public var details: String {
        "GRDB 7.10.0: Database\(mode == .pool ? "Pool" : "Queue") (WAL, synchronous=NORMAL), Codable "
            + "FetchableRecord & PersistableRecord, fetchOne = fetchOne(db, key:) in a read { } each, 3b: a cached "
            + "statement in one read { }; observers: "
            + (Self.usesPreUpdateHook
                ? "TransactionObserver + preupdate hook (row values)"
                : "TransactionObserver + rowid, age re-read in databaseDidCommit (no preupdate hook in this build)")
    }

    public static var usesPreUpdateHook: Bool {
        #if SQLITE_ENABLE_PREUPDATE_HOOK
            true
        #else
            false
        #endif
    }

    private let mode: Mode
    private var writer: (any DatabaseWriter)?
    private var records: [BenchRecord] = []
    private var singles: [BenchRecord] = []
    private var lookupKeys: [Int] = []
    private var thresholds: [Int] = []
    private var observers: [InsertObserver] = []
    private var fetched: () -> [BenchData.Row] = { [] }

    public init(mode: Mode = .pool) { self.mode = mode }

    public func prepare(_ data: BenchData, path: String) throws {
        records = data.rows.map(BenchRecord.init)
        singles = data.autocommitRows.map(BenchRecord.init)
        lookupKeys = data.lookupKeys
        thresholds = data.observerThresholds
        var configuration = Configuration()
        let writer: any DatabaseWriter
        switch mode {
        case .pool:
            writer = try DatabasePool(path: path, configuration: configuration)
        case .queue:
            configuration.journalMode = .wal
            writer = try DatabaseQueue(path: path, configuration: configuration)
        }
        try writer.write { db in
            try db.create(table: BenchRecord.databaseTableName) { table in
                table.column("id", .integer).primaryKey()
                table.column("name", .text).notNull()
                table.column("age", .integer).notNull()
                table.column("score", .double).notNull()
                table.column("active", .boolean).notNull()
                table.column("note", .text)
            }
        }
        let journal = try writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        let synchronous = try writer.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        guard journal == "wal", synchronous == 1 else {
            throw BenchError("GRDB: expected WAL + synchronous=NORMAL(1), got \(journal ?? "?") + \(synchronous ?? -1)")
        }
        self.writer = writer
    }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func insert() throws -> Int {
        guard let writer else { throw BenchError("GRDB: not prepared") }
        let records = records
        try writer.write { db in
            for record in records {
                try record.insert(db)
            }
        }
        return records.count
    }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchAll() throws -> Int {
        guard let writer else { throw BenchError("GRDB: not prepared") }
        let all = try writer.read { db in try BenchRecord.fetchAll(db) }
        fetched = { all.map(\.neutral) }
        return all.count
    }

    /// GRDB's documented fast path: a record that is no Codable type and reads its row by hand, `init(row:)`.
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchAllByRow() throws -> Int {
        guard let writer else { throw BenchError("GRDB: not prepared") }
        let all = try writer.read { db in try BenchRowRecord.fetchAll(db) }
        fetched = { all.map(\.neutral) }
        return all.count
    }

    public func fetchedRows() -> [BenchData.Row] { fetched() }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchOne() throws -> Int {
        guard let writer else { throw BenchError("GRDB: not prepared") }
        var found: [BenchRecord] = []
        found.reserveCapacity(lookupKeys.count)
        for key in lookupKeys {
            // As GRDB's users write a lookup: the record API, in a read access of its own.
            let record = try writer.read { db in try BenchRecord.fetchOne(db, key: key) }
            guard let record else { throw BenchError("GRDB: no row for key \(key)") }
            found.append(record)
        }
        fetched = { found.map(\.neutral) }
        return found.reduce(0) { $0 + $1.age }
    }

    /// As GRDB's documentation recommends for speed: one read access, a statement from the connection's cache.
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchOneInRead() throws -> Int {
        guard let writer else { throw BenchError("GRDB: not prepared") }
        let keys = lookupKeys
        let found = try writer.read { db in
            let statement = try db.cachedStatement(sql: Self.selectByKeySQL)
            var found: [BenchRecord] = []
            found.reserveCapacity(keys.count)
            for key in keys {
                guard let record = try BenchRecord.fetchOne(statement, arguments: [key]) else {
                    throw BenchError("GRDB: no row for key \(key)")
                }
                found.append(record)
            }
            return found
        }
        fetched = { found.map(\.neutral) }
        return found.reduce(0) { $0 + $1.age }
    }

    private static let selectByKeySQL =
        #"SELECT "id", "name", "age", "score", "active", "note" FROM "BenchRow" WHERE "id" = ?"#

    /// One `write { insert(db) }` per record: each a transaction of its own.
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func autocommitInsert() throws -> Int {
        guard let writer else { throw BenchError("GRDB: not prepared") }
        for record in singles {
            try writer.write { db in try record.insert(db) }
        }
        return singles.count
    }

    public func registerObservers(_ sink: NotificationSink) throws {
        guard let writer else { throw BenchError("GRDB: not prepared") }
        observers = thresholds.enumerated().map { index, threshold in
            InsertObserver(index: index, threshold: threshold, sink: sink)
        }
        for observer in observers {
            writer.add(transactionObserver: observer, extent: .observerLifetime)
        }
    }

    public func observedInsert() throws -> Int {
        try insert()
    }

    public func close() throws {
        if let writer {
            for observer in observers {
                writer.remove(transactionObserver: observer)
            }
            try writer.close()
        }
        observers = []
        writer = nil
    }
}

/// The GRDB record: synthesized Codable, table `BenchRow`.
struct BenchRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = BenchData.tableName
    var id: Int
    var name: String
    var age: Int
    var score: Double
    var active: Bool
    var note: String?

    var neutral: BenchData.Row {
        BenchData.Row(id: id, name: name, age: age, score: score, active: active, note: note)
    }

    init(_ row: BenchData.Row) {
        id = row.id
        name = row.name
        age = row.age
        score = row.score
        active = row.active
        note = row.note
    }
}

/// The same table read by a hand-written `FetchableRecord.init(row:)` instead of Codable (GRDB's
/// "Record Customization" path), reading columns by name like GQLStore's `GQLRow`.
struct BenchRowRecord: FetchableRecord, TableRecord {
    static let databaseTableName = BenchData.tableName
    var id: Int
    var name: String
    var age: Int
    var score: Double
    var active: Bool
    var note: String?

    var neutral: BenchData.Row {
        BenchData.Row(id: id, name: name, age: age, score: score, active: active, note: note)
    }

    init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        age = row["age"]
        score = row["score"]
        active = row["active"]
        note = row["note"]
    }
}

/// One observer: notified of inserts into `BenchRow` whose `age > threshold`.
///
/// `@unchecked Sendable`: GRDB calls every `TransactionObserver` method on the writer's serialized dispatch
/// queue only, and the benchmark touches `pending` nowhere else, so the mutable state is never shared.
final class InsertObserver: TransactionObserver, @unchecked Sendable {
    let index: Int
    let threshold: Int
    let sink: NotificationSink
    /// Keys of matching rows (preupdate build) or of all inserted rows (rowid build), in this transaction.
    private var pending: [Int64] = []

    init(index: Int, threshold: Int, sink: NotificationSink) {
        self.index = index
        self.threshold = threshold
        self.sink = sink
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        if case .insert(let tableName) = eventKind { return tableName == BenchData.tableName }
        return false
    }

    #if SQLITE_ENABLE_PREUPDATE_HOOK
        /// Column 2 is `age` in `BenchRow`'s declared order (id, name, age, score, active, note).
        func databaseWillChange(with event: DatabasePreUpdateEvent) {
            guard let rowID = event.finalRowID,
                let age = event.finalDatabaseValue(atIndex: 2).flatMap(Int.fromDatabaseValue),
                age > threshold
            else { return }
            pending.append(rowID)
        }

        func databaseDidChange(with event: DatabaseEvent) {}

        func databaseDidCommit(_ db: Database) {
            for key in pending {
                deliver(key)
            }
            pending.removeAll(keepingCapacity: true)
        }
    #else
        func databaseDidChange(with event: DatabaseEvent) {
            pending.append(event.rowID)
        }

        func databaseDidCommit(_ db: Database) {
            defer { pending.removeAll(keepingCapacity: true) }
            do {
                let statement = try db.cachedStatement(sql: #"SELECT "age" FROM "BenchRow" WHERE "id" = ?"#)
                for key in pending {
                    if let age = try Int.fetchOne(statement, arguments: [key]), age > threshold {
                        deliver(key)
                    }
                }
            } catch {
                // A benchmark observer has nowhere to report to: the missing notifications fail the run's check.
            }
        }
    #endif

    func databaseDidRollback(_ db: Database) {
        pending.removeAll(keepingCapacity: true)
    }

    @inline(never)
    private func deliver(_ key: Int64) {
        sink.record(index)
    }
}
