import Foundation
import GQLCore
import GQLStore
import Synchronization

/// The outbox's rows in SQLite: enqueue (with lazy merging), claim in call order, complete, set aside.
///
/// Every engine's items live in one table, `_gqlsync_outbox`, told apart by the engine's name, so several
/// engines can share a database. All statements are bound; the table is versioned by a namespaced
/// ``GQLMigrator`` (`gqlsync`), independent of the app's own migrations.
struct OutboxStore: Sendable {
    static let table = "_gqlsync_outbox"
    static let cursorTable = "_gqlsync_cursors"
    static let sequenceTable = "_gqlsync_sequence"
    static let lazyIndex = "_gqlsync_outbox_lazy"
    static let namespace = "gqlsync"

    let database: GQLDatabase
    let engine: String
    /// Whether `database` is the engine's own file, where only the engine's short writes compete for the writer.
    let ownsDatabase: Bool
    /// The record of delivered items not yet deleted, and the read-ahead; nil for a database without a file
    /// (then every delivered item is deleted by a commit of its own). Only the outbox calls it.
    let journal: OutboxJournal?
    /// Whether the engine may have lazy items: set at open when it has some, and by every lazy call (rolled back
    /// or not); while it is clear, a keyed call that is not lazy has no lazy item to turn steady.
    let lazyItems: LazyPresence
    /// The random number that names this outbox (``identity(_:engine:)``): its journal's header, and the first
    /// half of its items' idempotency keys, in hex with a dash.
    let keyPrefix: String
    /// The stored operations this process knows.
    let operations = Operations()

    /// A flag that only goes up (a rolled-back lazy call leaves it up too, which only costs a look-up).
    final class LazyPresence: Sendable {
        private let flag: Atomic<Bool>
        init(_ present: Bool) { flag = Atomic(present) }
        var mayExist: Bool { flag.load(ordering: .acquiring) }
        func note() { flag.store(true, ordering: .releasing) }
    }

    /// Opens the outbox of `engine` in `database`, creating or upgrading its table, and deletes the items its
    /// journal names (delivered by an earlier run that stopped before it deleted them).
    init(database: GQLDatabase, engine: String, ownsDatabase: Bool = false) throws {
        self.database = database
        self.engine = engine
        self.ownsDatabase = ownsDatabase
        _ = try Self.migrator.migrate(database)
        lazyItems = LazyPresence(
            try database.fetchAll(sql: Self.anyLazySQL, [engine]).first?["found"]?.intValue == 1)
        let identity = try Self.identity(database, engine: engine)
        keyPrefix = String(identity, radix: 16) + "-"
        if let path = OutboxJournal.path(database: database.path, engine: engine) {
            journal = try OutboxJournal(path: path, identity: identity)
        } else {
            journal = nil
        }
        if let journal {
            let recorded = journal.recordedInOrder
            if !recorded.isEmpty {
                try database.write { tx in try delete(recorded, in: tx) }
                try journal.drop(first: recorded.count)
            }
        }
    }

    /// Removes the journal's file when it records nothing (the engine shuts down, its loop ended).
    func removeJournalIfEmpty() {
        journal?.removeIfEmpty()
    }

    /// What names an engine's identity row in `_gqlsync_sequence`, before the engine's name.
    static let identityPrefix = "journal "

    /// The random number that names this outbox, made once and kept in `_gqlsync_sequence`: in its journal's
    /// header (a database deleted and made again gets another, so an old journal beside it is ignored) and in its
    /// items' idempotency keys. The same write removes the operations no item names any more.
    private static func identity(_ database: GQLDatabase, engine: String) throws -> UInt64 {
        let name = identityPrefix + engine
        let stored = try database.write { tx in
            _ = try tx.fetchAll(
                sql: "INSERT INTO \(sequenceTable) (name, last_id) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                [name, Int64.random(in: 1...Int64.max)])
            try removeUnusedOperations(tx)
            try setAsideUnknownStates(tx, engine: engine)
            return try tx.fetchAll(sql: "SELECT last_id FROM \(sequenceTable) WHERE name = ?", [name]).first
        }
        guard let identity = stored?["last_id"]?.intValue else {
            throw GQLError(.sqlite, "the outbox has no journal identity", table: sequenceTable)
        }
        return UInt64(bitPattern: identity)
    }

    // MARK: Enqueue

    /// What an enqueue did.
    enum Enqueued: Sendable, Equatable {
        /// A new item with this id.
        case inserted(Int64)
        /// The values were merged into the unsent item with this id.
        case merged(Int64)

        var id: Int64 {
            switch self {
            case .inserted(let id), .merged(let id): id
            }
        }
    }

    /// A call as it is queued: everything captured when it was made.
    struct Call: Sendable {
        var mode: OutboxMode
        var operation: Operation
        /// The values as JSON text (``OutboxJSON``).
        var input: String
        /// The values themselves, for a lazy call to merge.
        var values: GQLValues?
        var key: GQLValue?
    }

    /// Adds a call to the outbox inside `tx`.
    ///
    /// A `lazy` call merges into the newest item for the same key when that item is a lazy call of the same
    /// operation that was never handed to the network (`attempts = 0`) and not set aside; newer fields win,
    /// earlier fields are kept, and the item gets a new idempotency key (its content changed). Otherwise —
    /// another item for the key came after it, or it has been tried — the call becomes a new item behind it, so
    /// no value is ever marked sent without being sent.
    ///
    /// Only lazy items are in the key index; any other call for a key turns the key's lazy items `steady` (a
    /// look-up in that index, skipped while the engine has no lazy item, ``lazyItems``), so the newest lazy item
    /// for a key is always the newest item for it when it is still `lazy`. A steady call of an engine without lazy
    /// items is one statement when its operation's id is known: the insert, its id read back from SQLite.
    func enqueue(_ call: Call, in tx: GQLTransaction) throws -> Enqueued {
        let (mode, operation) = (call.mode, call.operation)
        let keyText: String?
        do {
            keyText = try call.key.map(OutboxJSON.value)
        } catch let error as GQLError {
            throw GQLError(error.code, "the key: \(error.message)", operation: operation.name)
        }
        if mode == .lazy {
            lazyItems.note()
            if let keyText, let merged = try merge(call, key: keyText, in: tx) { return .merged(merged) }
        }
        // Statements through fetchAll and insert are prepared once per connection and leave the store's schema
        // cache alone; tx.execute would do neither, and cost the app's next write a recheck.
        if mode != .lazy, let keyText, lazyItems.mayExist {
            _ = try tx.fetchAll(sql: Self.turnSteadySQL, [engine, keyText])
        }
        let input = call.input
        let created = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let row = { (op: Int64) -> [GQLValue] in
            [
                .string(engine), .string(mode.rawValue), .int(op), keyText.map { .string($0) } ?? .null,
                .string(input), .int(Self.newNonce()), .int(created),
            ]
        }
        // The insert selects the operation's id from its table: nothing is inserted when it is gone.
        if let op = operations.id(of: operation),
            let id = try tx.insertIfSelected(sql: Self.insertSQL, row(op), table: Self.table)
        {
            return .inserted(id)
        }
        let op = try storedOperation(operation, in: tx)
        guard let id = try tx.insertIfSelected(sql: Self.insertSQL, row(op), table: Self.table) else {
            throw GQLError(
                .sqlite, "the item's operation \(op) was not found right after it was stored", table: Self.table)
        }
        return .inserted(id)
    }

    /// Merges `values` into the key's newest lazy item when that item may still take them; its id, or nil.
    private func merge(_ call: Call, key: String, in tx: GQLTransaction) throws -> Int64? {
        guard let last = try tx.fetchAll(sql: Self.newestLazySQL, [engine, key]).first,
            last["name"]?.stringValue == call.operation.name, last["wrap"]?.stringValue == call.operation.wrap,
            last["state"]?.stringValue == "pending", last["attempts"]?.intValue == 0, let id = last["id"]?.intValue
        else { return nil }
        let earlier = try Self.decodeObject(last["input"]?.stringValue, id: id)
        let merged = earlier.merging(call.values ?? [:]) { _, newer in newer }
        _ = try tx.fetchAll(
            sql: "UPDATE \(Self.table) SET input = ?, idempotency = NULL, nonce = ? WHERE id = ? RETURNING id",
            [try OutboxJSON.object(merged), Self.newNonce(), id])
        return id
    }

    private static let newestLazySQL = """
        SELECT o.id, o.state, o.attempts, o.input, p.name, p.wrap FROM \(table) o INDEXED BY \(lazyIndex)
        LEFT JOIN \(operationTable) p ON p.id = o.op
        WHERE o.engine = ? AND o.key = ? AND o.mode = 'lazy' ORDER BY o.id DESC LIMIT 1
        """

    private static let turnSteadySQL = """
        UPDATE \(table) INDEXED BY \(lazyIndex) SET mode = 'steady'
        WHERE engine = ? AND key = ? AND mode = 'lazy' RETURNING id
        """
    private static let anyLazySQL = """
        SELECT EXISTS (SELECT 1 FROM \(table) INDEXED BY \(lazyIndex) WHERE engine = ? AND mode = 'lazy') AS found
        """

    /// The id is SQLite's own choice, one more than the largest in the table, which is never smaller than any id
    /// removed (``keepLargest(_:in:)``), so ids are never reused. `op` is read from its table: when the operation
    /// is gone it is NULL, and `OR IGNORE` skips the row (the other columns are never NULL, and the id is free).
    private static let insertSQL = """
        INSERT OR IGNORE INTO \(table) (engine, mode, op, key, input, nonce, created_at)
        VALUES (?1, ?2, (SELECT id FROM \(operationTable) WHERE id = ?3), ?4, ?5, ?6, ?7)
        """

    /// Deletes items in `tx`, keeping the largest id removed so that no later item gets it again.
    func delete(_ ids: [Int64], in tx: GQLTransaction) throws {
        guard let largest = ids.max() else { return }
        try deleteRows(ids, in: tx)
        try keepLargest(largest, in: tx)
    }

    func deleteRows(_ ids: [Int64], in tx: GQLTransaction) throws {
        switch ids.count {
        case 0: return
        case 1: _ = try tx.change(sql: Self.deleteSQL, [.int(ids[0])], table: Self.table)
        default:
            // One statement for a journal's worth of ids (a statement per id cost about 3 µs each).
            let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
            _ = try tx.change(sql: Self.deleteManySQL, [.string(list)], table: Self.table)
        }
    }

    /// Keeps `largest`, a removed id, from coming back: when no larger id stays in the table, a tombstone row
    /// with that id (state `removed`, no engine) takes its place and the older tombstone goes, so the table's
    /// largest id, from which SQLite makes the next one, never goes down (outbox step 7). A larger id left behind
    /// already keeps it from coming back; draining a long queue thus writes a tombstone once, at the end.
    func keepLargest(_ largest: Int64, in tx: GQLTransaction) throws {
        if try tx.change(sql: Self.tombstoneSQL, [.int(largest)], table: Self.table) > 0 {
            _ = try tx.fetchAll(sql: Self.olderTombstonesSQL, [largest])
        }
    }

    /// A tombstone never leaves through an item's delete, even when a journal names its id again.
    private static let deleteSQL = "DELETE FROM \(table) WHERE id = ? AND state <> 'removed'"
    private static let deleteManySQL = """
        DELETE FROM \(table) WHERE id IN (SELECT value FROM json_each(?)) AND state <> 'removed'
        """
    static let tombstoneSQL = """
        INSERT INTO \(table) (id, engine, mode, op, input, state, created_at)
        SELECT ?1, '', 'steady', 0, '', 'removed', 0 WHERE coalesce((SELECT max(id) FROM \(table)), 0) < ?1
        """
    private static let olderTombstonesSQL = "DELETE FROM \(table) WHERE state = 'removed' AND id < ? RETURNING id"

    /// Runs the delivery loop's own records (removals, items set aside, claims) in one write off the caller's
    /// thread, committed at `synchronous = NORMAL`: the level of the engine's own file, or switched to for this
    /// write in an app's database opened `.full`.
    ///
    /// A process crash (kill -9) loses nothing committed at `NORMAL` in WAL mode: the commit is in the file
    /// before the call returns. Only a power loss or an OS crash may take back the last such records; then items
    /// delivered just before it are sent again, each with its idempotency key, and an item whose claim was lost
    /// counts as never tried, so a `lazy` call could merge into it — it then gets a new idempotency key, and the
    /// server applies the merged values rather than dropping them as a duplicate. The queued items themselves
    /// are committed by ``queueWrite(_:)`` (`.full` in the engine's own file), and a `.full` commit also makes
    /// every earlier record durable.
    ///
    /// In the engine's own file the only other writes are its enqueues, each short, so the records are written on
    /// the calling task: a hop to a Dispatch thread and back cost more than the write. In the app's database a
    /// long write of the app's may hold the writer, so they wait on a Dispatch thread, not on the caller's.
    func bookkeeping<T: Sendable>(_ body: @escaping @Sendable (GQLTransaction) throws -> T) async throws -> T {
        let database = database
        let level: GQLDatabase.Configuration.Synchronous? = database.configuration.synchronous == .full ? .normal : nil
        if ownsDatabase { return try database.write(synchronous: level, body) }
        return try await offload { try database.write(synchronous: level, body) }
    }

    /// The level queued items commit at: `.full` in the engine's own file (opened at `.normal`, the level of the
    /// delivery records, so that only a queued item pays for the switch), the app's own level in its database.
    var queueLevel: GQLDatabase.Configuration.Synchronous? { ownsDatabase ? .full : nil }

    /// A write that queues items or changes what is queued (``retry(_:)``, ``drop(_:)``), at ``queueLevel``.
    func queueWrite<T>(_ body: (GQLTransaction) throws -> T) throws -> T {
        try database.write(synchronous: queueLevel, body)
    }

    /// ``queueWrite(_:)`` on a Dispatch thread, without blocking the caller's.
    func queueWrite<T: Sendable>(_ body: @escaping @Sendable (GQLTransaction) throws -> T) async throws -> T {
        let (database, level) = (database, queueLevel)
        return try await offload { try database.write(synchronous: level, body) }
    }

    /// Replaces an item's values and idempotency key (a conflict resolved by resending other values).
    func replaceValues(_ id: Int64, _ values: GQLValues) throws {
        try database.write { tx in
            try tx.execute(
                "UPDATE \(Self.table) SET input = ?, idempotency = NULL, nonce = ? WHERE id = ?",
                [try OutboxJSON.object(values), Self.newNonce(), id])
        }
    }

    // MARK: Rows

    /// The item of a row's `id`, `op`, `key`, `input`, `idempotency`, `nonce` and `attempts`, read in `context`;
    /// a row that cannot be read as one (bad JSON, an operation that is not stored) is an item with its
    /// ``OutboxItem/damage``, so that it is set aside rather than stopping every claim.
    func item(_ row: OutboxRow, in context: some GQLDatabaseContext) throws -> OutboxItem {
        guard let id = row.id else {
            throw GQLError(.decoding, "an outbox row lacks its id", table: Self.table)
        }
        do {
            return try readItem(id, row, in: context)
        } catch let error as GQLError where error.code == .decoding || error.code == .invalidJSON {
            let name = row.op.intValue.flatMap { op in
                try? Self.operation(op, item: id, operations: operations, in: context).name
            }
            return OutboxItem(
                id: id, operationID: nil, name: name ?? "", key: nil, query: "", input: "{}", wrap: nil,
                idempotencyKey: "", attempts: Int(row.attempts ?? 0),
                damage: GQLSync.Failure(message: "set aside unsent: \(error.message)"))
        }
    }

    private func readItem(_ id: Int64, _ row: OutboxRow, in context: some GQLDatabaseContext) throws -> OutboxItem {
        guard let op = row.op.intValue else {
            throw GQLError(
                .decoding, "outbox item \(id) names its operation by \(row.op.kindName), not an id",
                table: Self.table)
        }
        let operation = try Self.operation(op, item: id, operations: operations, in: context)
        let idempotencyKey: String
        if let stored = row.idempotency {
            idempotencyKey = stored
        } else if let nonce = row.nonce {
            idempotencyKey = keyPrefix + String(UInt64(bitPattern: nonce), radix: 16)
        } else {
            throw GQLError(.decoding, "outbox item \(id) has no idempotency key", table: Self.table)
        }
        let key: GQLValue?
        do {
            key = try row.key.map { try GQLValue(jsonBytes: Array($0.utf8)) }
        } catch let error as GQLError {
            throw GQLError(
                .decoding, "outbox item \(id) has a key that is not JSON (\(error.message))", table: Self.table)
        }
        // Checked, not parsed: most items are only ever sent as the text they hold. The parser names the fault.
        guard let input = row.input, GQLValue.isJSONObject(input) else {
            _ = try Self.decodeObject(row.input, id: id)
            throw GQLError(.decoding, "outbox item \(id) has values that are not a JSON object", table: Self.table)
        }
        return OutboxItem(
            id: id, operationID: op, name: operation.name, key: key, query: operation.query, input: input,
            wrap: operation.wrap, idempotencyKey: idempotencyKey, attempts: Int(row.attempts ?? 0))
    }

    static func decodeObject(_ text: String?, id: Int64) throws -> GQLValues {
        // From the text's bytes: GQLValue(json:) would copy them through Data first.
        let value: GQLValue?
        do {
            value = try text.map { try GQLValue(jsonBytes: Array($0.utf8)) }
        } catch let error as GQLError {
            throw GQLError(.decoding, "outbox item \(id) has values that are not JSON (\(error.message))", table: table)
        }
        guard case .object(let values)? = value else {
            throw GQLError(
                .decoding, "outbox item \(id) has \(value?.kindName ?? "no") values, not a JSON object", table: table)
        }
        return values
    }

    /// A number no other item of this process gets, and unlike any of another process's but by chance: SplitMix64
    /// of a counter from a random start drawn once per process (a random number per item cost a `getrandom` call
    /// on every enqueue). With the outbox's identity it is the item's idempotency key.
    static func newNonce() -> Int64 {
        var z = nonceState.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int64(bitPattern: z ^ (z >> 31))
    }

    private static let nonceState = Atomic<UInt64>(UInt64.random(in: 0...UInt64.max))
}
