import BenchKit
import Dispatch
import Foundation
import GQLStore

/// GQLStore, through its documented API only.
///
/// Inserts run in one `db.write { tx in }` transaction; `fetchAll` / `fetchOne(db, key:)` are the type's own
/// calls, one call per lookup. Observers are `BenchRow.createObserver(db, [.insert], "OBJ.age > N")`; their
/// callbacks arrive after COMMIT on GQLStore's delivery queue, and the workload's clock stops only once
/// `db.observersIdle()` has returned (every callback has run).
public final class GQLStoreBench: StoreImplementation {
    public let name: String
    public let details: String
    /// The key of an encrypted run (EncryptionBench), `nil` for a plain file.
    private let key: GQLDatabase.Key?
    /// `Configuration.pageCacheKiB` of every connection (nil: GQLStore's default for the file).
    private let pageCacheKiB: Int?
    /// `PRAGMA cache_size` as a reader connection of the last prepared file reports it (EncryptionBench prints and
    /// compares both sides').
    public private(set) var cacheSize: Int64?

    private var db: GQLDatabase?
    private var objects: [BenchRow] = []
    private var singles: [BenchRow] = []
    private var lookupKeys: [Int] = []
    private var thresholds: [Int] = []
    private var observerIDs: [String] = []
    private var sink: NotificationSink?
    private var fetched: () -> [BenchData.Row] = { [] }

    /// GQLStore on encrypted files, with a fixed 32-byte raw key (no key derivation inside the workloads).
    public static func encrypted() -> GQLStoreBench {
        GQLStoreBench(key: .raw(Data((0..<32).map { UInt8($0 &* 7 &+ 3) })))
    }

    /// What opening an encrypted file costs, apart from the workloads: the median of `samples` opens of an existing
    /// file followed by one lookup, with no key (a plain file), with the raw key and with a passphrase
    /// (PBKDF2-HMAC-SHA512, `GQLDatabase.Key.passphraseIterations` rounds, paid once per open). Milliseconds, in
    /// that order; the passphrase's excess over the raw key is the key derivation.
    public static func openCost(directory: String, samples: Int = 5) throws -> [(label: String, milliseconds: Double)] {
        let keys: [(String, GQLDatabase.Key?)] = [
            ("plain", nil), ("raw key", .raw(Data((0..<32).map { UInt8($0 &* 7 &+ 3) }))),
            ("passphrase", .passphrase("correct horse battery staple")),
        ]
        var results: [(label: String, milliseconds: Double)] = []
        for (label, key) in keys {
            let path = directory + "/open-\(label.filter(\.isLetter)).sqlite"
            func open() throws -> GQLDatabase {
                try key.map { try GQLDatabase(path: path, key: $0) } ?? GQLDatabase(path: path)
            }
            do {
                var row = BenchRow()
                row.id = 1
                row.age = 42
                try row.insert(try open())
            }
            var times: [Double] = []
            for _ in 0..<samples {
                let clock = ContinuousClock()
                let start = clock.now
                let found = try BenchRow.fetchOne(try open(), key: 1)
                let elapsed = clock.now - start
                guard found?.age == 42 else { throw BenchError("open cost (\(label)): the row did not read back") }
                times.append(Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15)
            }
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            results.append((label, Statistics.median(times) ?? .nan))
        }
        return results
    }

    /// `key`: open every file encrypted with it (GQLDatabase(path:key:)), for EncryptionBench.
    /// `pageCacheKiB`: each connection's page cache (EncryptionBench gives the plain side the encrypted default).
    public init(key: GQLDatabase.Key? = nil, pageCacheKiB: Int? = nil) {
        self.key = key
        self.pageCacheKiB = pageCacheKiB
        name = key == nil ? "GQLStore" : "GQLStore encrypted"
        details =
            "\(name): GQLDatabase(path:\(key == nil ? "" : "key: .raw(32 bytes)")) (WAL by default, "
            + "PRAGMA synchronous=NORMAL via db.execute), db.write { tx in insert(tx) }, BenchRow.fetchAll/fetchOne(db, "
            + "key:) (3b: fetchOne(tx, key:) in one db.read { tx in }), createObserver(db, [.insert], \"OBJ.age > N\")"
    }

    public func prepare(_ data: BenchData, path: String) throws {
        objects = data.rows.map(BenchRow.init)
        singles = data.autocommitRows.map(BenchRow.init)
        lookupKeys = data.lookupKeys
        thresholds = data.observerThresholds
        var configuration = GQLDatabase.Configuration()
        configuration.pageCacheKiB = pageCacheKiB
        let db =
            try key.map { try GQLDatabase(path: path, key: $0, configuration: configuration) }
            ?? GQLDatabase(path: path, configuration: configuration)
        cacheSize = try db.fetchAll(sql: "PRAGMA cache_size").first?["cache_size"]?.intValue
        // GQLDatabase opens in WAL mode itself (the runner checks the file's journal mode from outside);
        // synchronous is per connection and not observable through the public API, so set it on the writer.
        try db.execute("PRAGMA synchronous=NORMAL")
        try db.register(BenchRow.self)  // creates the table now, outside the clock
        self.db = db
    }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func insert() throws -> Int {
        guard let db else { throw BenchError("GQLStore: not prepared") }
        let objects = objects
        try db.write { tx in
            for object in objects {
                try object.insert(tx)
            }
        }
        return objects.count
    }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchAll() throws -> Int {
        guard let db else { throw BenchError("GQLStore: not prepared") }
        let rows = try BenchRow.fetchAll(db)
        fetched = { rows.map(\.neutral) }
        return rows.count
    }

    /// The opt-in fast path: `BenchRowByHand` adopts `GQLRowDecodable`, so `fetchAll` calls its `init(row:)`.
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchAllByRow() throws -> Int {
        guard let db else { throw BenchError("GQLStore: not prepared") }
        let rows = try BenchRowByHand.fetchAll(db)
        fetched = { rows.map(\.neutral) }
        return rows.count
    }

    public func fetchedRows() -> [BenchData.Row] { fetched() }

    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchOne() throws -> Int {
        guard let db else { throw BenchError("GQLStore: not prepared") }
        let found = try Self.lookUp(lookupKeys, in: db)
        fetched = { found.map(\.neutral) }
        return found.reduce(0) { $0 + $1.age }
    }

    /// The same lookups in one `db.read { tx in }` (one reader connection and one snapshot for all of them).
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func fetchOneInRead() throws -> Int {
        guard let db else { throw BenchError("GQLStore: not prepared") }
        let keys = lookupKeys
        let found = try db.read { tx in try Self.lookUp(keys, in: tx) }
        fetched = { found.map(\.neutral) }
        return found.reduce(0) { $0 + $1.age }
    }

    /// One `BenchRow.fetchOne(_:key:)` call per key, on the database or inside a transaction.
    private static func lookUp(_ keys: [Int], in context: some GQLDatabaseContext) throws -> [BenchRow] {
        var found: [BenchRow] = []
        found.reserveCapacity(keys.count)
        for key in keys {
            guard let object = try BenchRow.fetchOne(context, key: key) else {
                throw BenchError("GQLStore: no row for key \(key)")
            }
            found.append(object)
        }
        return found
    }

    /// One `insert(db)` per object: each call is a write transaction of its own.
    @inline(never)  // its own symbol, for callgrind-store.sh
    public func autocommitInsert() throws -> Int {
        guard let db else { throw BenchError("GQLStore: not prepared") }
        for object in singles {
            try object.insert(db)
        }
        return singles.count
    }

    public func registerObservers(_ sink: NotificationSink) throws {
        guard let db else { throw BenchError("GQLStore: not prepared") }
        self.sink = sink
        observerIDs = try thresholds.enumerated().map { index, threshold in
            try BenchRow.createObserver(db, [.insert], "OBJ.age > \(threshold)") { _, _ in
                sink.record(index)
            }
        }
    }

    public func observedInsert() throws -> Int {
        guard let db, sink != nil else { throw BenchError("GQLStore: observers not registered") }
        let count = try insert()
        // `observersIdle()` returns once every callback of the writes committed so far has run. It is async;
        // bridge it with a semaphore (the workload API is synchronous). The runner then checks the counts.
        let idle = DispatchSemaphore(value: 0)
        Task {
            await db.observersIdle()
            idle.signal()
        }
        guard idle.wait(timeout: .now() + .seconds(120)) == .success else {
            throw BenchError("GQLStore: observersIdle() did not return within 120 s")
        }
        return count
    }

    public func close() throws {
        if let db {
            for id in observerIDs {
                BenchRow.removeObserver(db, id)
            }
        }
        observerIDs = []
        sink = nil
        db = nil
    }
}

/// The GQLStore object: table `BenchRow`, primary key `id`.
struct BenchRow: GQLObject {
    var id = 0
    var name = ""
    var age = 0
    var score = 0.0
    var active = false
    var note: String? = nil

    static func primaryKey() -> String { "id" }

    var neutral: BenchData.Row {
        BenchData.Row(id: id, name: name, age: age, score: score, active: active, note: note)
    }

    init() {}

    init(_ row: BenchData.Row) {
        id = row.id
        name = row.name
        age = row.age
        score = row.score
        active = row.active
        note = row.note
    }
}

/// The same table, fetched through `GQLRowDecodable.init(row:)` instead of Codable (the table still comes from
/// the Codable shape, identical to `BenchRow`'s).
struct BenchRowByHand: GQLObject, GQLRowDecodable {
    var id = 0
    var name = ""
    var age = 0
    var score = 0.0
    var active = false
    var note: String? = nil

    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "BenchRow" }

    var neutral: BenchData.Row {
        BenchData.Row(id: id, name: name, age: age, score: score, active: active, note: note)
    }

    init() {}

    init(row: GQLRow) throws {
        id = try row["id"]
        name = try row["name"]
        age = try row["age"]
        score = try row["score"]
        active = try row["active"]
        note = try row["note"]
    }
}
