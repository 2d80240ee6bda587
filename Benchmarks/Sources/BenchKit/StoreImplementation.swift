import Synchronization

/// The seven measured workloads, in the order they run and print.
public enum Workload: Int, CaseIterable, Sendable {
    case insert, fetchAll, fetchAllByRow, fetchOne, fetchOneInRead, autocommit, observedInsert

    public var label: String {
        switch self {
        case .insert: "insert N (1 tx)"
        case .fetchAll: "fetchAll N (Codable)"
        case .fetchAllByRow: "fetchAll N (init(row:))"
        case .fetchOne: "fetchOne 10k, a call each"
        case .fetchOneInRead: "fetchOne 10k in one read"
        case .autocommit: "insert 1k, a tx each"
        case .observedInsert: "insert N + 10 observers"
        }
    }
}

/// What one implementation must do. Each method is timed by the caller around the call only; opening and
/// preparing a fresh database, and converting ``BenchData`` into the implementation's own record type,
/// happen in ``prepare(_:path:)`` before the clock starts.
///
/// The caller runs, per round: `prepare` on a fresh file → `insert` → `fetchAll` → `fetchAllByRow` → `fetchOne` →
/// `fetchOneInRead` → `autocommitInsert` → `close`, then `prepare` on another fresh file → `registerObservers` (untimed) →
/// `observedInsert` → `close`.
public protocol StoreImplementation: AnyObject {
    /// Column header, e.g. "GRDB".
    var name: String { get }
    /// One line about how this implementation is configured (printed under the table).
    var details: String { get }
    /// Opens a fresh database at `path` (the file does not exist yet), sets WAL + synchronous=NORMAL and creates
    /// the table; converts `data` into the implementation's own types. Not timed.
    func prepare(_ data: BenchData, path: String) throws
    /// Workload 1: insert all rows in one transaction. Returns the number of rows inserted.
    func insert() throws -> Int
    /// Workload 2: fetch every row, decoded into structs through the library's Codable support. Returns the
    /// number of rows fetched.
    func fetchAll() throws -> Int
    /// Workload 2b: fetch every row into structs that build themselves from a row by hand (no Codable):
    /// GQLStore's `GQLRowDecodable`, GRDB's `FetchableRecord.init(row:)`. Returns the number of rows fetched.
    func fetchAllByRow() throws -> Int
    /// The rows the last `fetchAll`, `fetchAllByRow`, `fetchOne` or `fetchOneInRead` returned, in neutral form, for the runner to compare with
    /// the data field by field. Not timed: the workloads keep their result and convert it only here.
    func fetchedRows() -> [BenchData.Row]
    /// Workload 3: fetch `data.lookupKeys` one by one, each lookup its own call as the library's users write it
    /// (GQLStore `fetchOne(db, key:)`, GRDB's record API `fetchOne(db, key:)` in a `read { }`). Returns the sum of
    /// the fetched rows' ages; ``fetchedRows()`` then returns the fetched rows in lookup order.
    func fetchOne() throws -> Int
    /// Workload 3b: the same lookups inside one read access, as each library recommends for speed (GQLStore
    /// `db.read { tx in fetchOne(tx, key:) }`, GRDB a cached statement in one `read { }`). Same result as 3.
    func fetchOneInRead() throws -> Int
    /// Workload 3c: insert `data.autocommitRows` one by one, each a statement and a transaction of its own (an app
    /// saving one object at a time: GQLStore `insert(db)`, GRDB `write { insert(db) }`, raw C one `sqlite3_step` in
    /// autocommit mode). Returns the number of rows inserted.
    func autocommitInsert() throws -> Int
    /// Registers `data.observerThresholds.count` insert observers; observer `i` calls `sink.record(i)` once
    /// per inserted row with `age > data.observerThresholds[i]`. Not timed.
    func registerObservers(_ sink: NotificationSink) throws
    /// Workload 4: insert all rows in one transaction with the observers registered, and return only once
    /// every notification has been delivered to the sink. Returns the number of rows inserted.
    func observedInsert() throws -> Int
    /// Closes the database (observers are removed first). Not timed.
    func close() throws
}

/// Counts delivered observer notifications, per observer. Thread-safe: GQLStore delivers on its own queue.
public final class NotificationSink: Sendable {
    /// `Atomic` is non-copyable, so each counter lives in its own object to be stored in an array.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
    private let counters: [Counter]

    public init(observerCount: Int) {
        counters = (0..<observerCount).map { _ in Counter() }
    }

    /// Called by an observer's callback once per notification.
    @inline(__always)
    public func record(_ observer: Int) {
        counters[observer].value.add(1, ordering: .relaxed)
    }

    public var delivered: Int { counters.reduce(0) { $0 + $1.value.load(ordering: .relaxed) } }
    public func delivered(observer: Int) -> Int { counters[observer].value.load(ordering: .relaxed) }
}

/// A benchmark failure with the implementation and workload it happened in.
public struct BenchError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
