import GQLCache
import GQLCore
import GQLNet
import GQLStore

/// The optimistic answers of outbox items (``GQLSync/steady(_:_:_:optimistic:)``), laid over the engine's
/// ``GQLSync/Configuration/cache`` while their items are pending.
///
/// Each answer is a row of `_gqlsync_optimistic` in the outbox's database, written in the transaction that
/// commits its item (so it survives a restart exactly as the item does; a table of its own, made by a migrator
/// of namespace `gqlsync_optimistic`, so the outbox's own schema is left alone). An engine that opens shows the
/// answers of its pending items again and deletes the rows of items that are gone. When an item is delivered,
/// the server's answer is stored in the cache through the item's operation in place of the layer; when it is set
/// aside, the layer goes (a rollback) but the row stays, so that ``GQLSync/retry(_:)`` shows the answer again
/// while the item waits once more; when it is dropped (as a conflict, or by ``GQLSync/drop(_:)``), the layer and
/// the row go.
final class OutboxLayers: Sendable {
    static let table = "_gqlsync_optimistic"
    let cache: GQLCache
    let database: GQLDatabase
    let engine: String
    /// The layer shown for each item.
    private let shown = GQLLocked<[Int64: GQLCache.Layer]>([:])
    /// Each shown answer's data: the shape a delivered answer's objects take their `__typename` (and, when they
    /// lack it, their key) from (see ``delivered(_:_:)``).
    private let shapes = GQLLocked<[Int64: GQLValue]>([:])
    /// Held across each ``retry(_:_:)``, so retries run one at a time (see there).
    private let retrying = GQLLocked(())
    /// How many retries wait for the one in progress (for tests that script two racing retries).
    let retriesWaiting = GQLLocked(0)
    /// Called by ``retry(_:_:)`` once the item's answer is shown, before the outbox's retry (for tests).
    let afterShowing = GQLLocked<(@Sendable (Int64) -> Void)?>(nil)

    /// One stored answer.
    struct Answer: Sendable {
        var item: Int64
        var query: String
        var variables: GQLValues
        var data: GQLValue
    }

    init(cache: GQLCache, outbox: OutboxStore) throws {
        self.cache = cache
        database = outbox.database
        engine = outbox.engine
        var migrator = GQLMigrator(namespace: "gqlsync_optimistic")
        migrator.step(1, "optimistic answers") { tx in
            try tx.execute(
                """
                CREATE TABLE \(Self.table) (
                    item INTEGER PRIMARY KEY, engine TEXT NOT NULL, query TEXT NOT NULL, variables TEXT NOT NULL,
                    answer TEXT NOT NULL
                )
                """)
        }
        try migrator.migrate(database)
        try restore()
    }

    /// Stores `answer` for the item in `tx` (the item's own transaction), replacing one it had (a lazy call
    /// merged into it: the newest answer wins).
    func save(_ answer: Answer, in tx: GQLTransaction) throws {
        let variables = try GQLValue.object(answer.variables).jsonString()
        let data = try answer.data.jsonString()
        _ = try tx.execute(
            "INSERT OR REPLACE INTO \(Self.table) (item, engine, query, variables, answer) VALUES (?, ?, ?, ?, ?)",
            [answer.item, engine, answer.query, variables, data])
    }

    /// Lays the answer over the cache (replacing the item's earlier layer).
    func show(_ answer: Answer) throws {
        let layer = try cache.addOptimisticLayer(answer.query, answer.variables.dictionary, data: answer.data)
        shapes.withLock { $0[answer.item] = answer.data }
        if let old = shown.withLock({ $0.updateValue(layer, forKey: answer.item) }) {
            cache.removeOptimisticLayer(old)
        }
    }

    /// The item was delivered: the server's answer is stored in the cache through the item's operation (the
    /// text and variables it was sent with), as `GQLCache.mutate` stores its own, and replaces the layer in one
    /// change; then the row goes. Keyed objects, nested ones too, become records (a query that reads one sees the
    /// server's version); objects without a key are stored under the mutation's path. The text GQLSync sends is
    /// the app's, without the `__typename` GQLCache adds, so an object that names no type takes the one the
    /// optimistic answer gives at the same place (and, still without a key there, that object's key: `rename`
    /// answered `{"name": "Ada"}` over an optimistic `Person:1` replaces it); a root object that neither names
    /// is typed by its mutation field AppSync's way (`updateNote` → a `Note`). A `delete…` field's object is a
    /// tombstone: its record is evicted.
    func delivered(_ item: OutboxItem, _ result: GQLResult) async {
        let id = item.id
        let shape = shapes.withLock { $0.removeValue(forKey: id) }
        let layer = shown.withLock { $0.removeValue(forKey: id) }
        // An answer with errors (partial data) is not stored, as the cache stores none.
        guard result.errors.isEmpty, case .object(var data)? = result.data, let variables = try? item.variables()
        else {
            if let layer { cache.removeOptimisticLayer(layer) }
            await rolledBack(id)
            return
        }
        var evicting = false
        if data.count == 1, let (field, answer) = data.first, case .object(var object) = answer {
            evicting = field.hasPrefix("delete")
            if object["__typename"] == nil, shape?[field]?["__typename"] == nil,
                let typename = ConflictHandler.table(forMutationField: field)
            {
                object["__typename"] = .string(typename)
                data[field] = .object(object)
            }
        }
        // An answer that does not fit the operation is not stored; the layer goes all the same.
        try? cache.storeDelivered(
            .object(data), of: item.query, variables, shape: shape, evicting: evicting, replacing: layer)
        await rolledBack(id)
    }

    /// The item is gone without an answer (dropped): the layer and the row go.
    func rolledBack(_ id: Int64) async {
        setAside(id)
        shapes.withLock { _ = $0.removeValue(forKey: id) }
        _ = try? await database.execute("DELETE FROM \(Self.table) WHERE item = ?", [id])
    }

    /// The item was set aside as failed: its layer goes (watchers see the data as it was), its row stays for a
    /// ``retry(_:_:)``.
    func setAside(_ id: Int64) {
        if let layer = shown.withLock({ $0.removeValue(forKey: id) }) { cache.removeOptimisticLayer(layer) }
    }

    /// Puts failed item `id` back in the queue through `retry` (the outbox's, which says whether the item was
    /// failed) with its stored answer shown first (before the item can be sent, so its delivery finds the layer to
    /// replace); when `retry` refuses or throws, the answer is hidden again.
    ///
    /// Retries run one at a time: two racing retries of one item would otherwise both show its answer (the second
    /// replacing the first's layer), and the refused one, hiding "its" answer, would take away the only layer of
    /// an item that is pending again. In turn, the second sees the item pending, shows nothing and touches nothing.
    func retry(_ id: Int64, _ retry: () throws -> Bool) throws -> Bool {
        retriesWaiting.withLock { $0 += 1 }
        return try retrying.withLock { _ in
            retriesWaiting.withLock { $0 -= 1 }
            let shown = show(failed: id)
            if shown, let hook = afterShowing.withLock({ $0 }) { hook(id) }
            do {
                let retried = try retry()
                if !retried, shown { setAside(id) }
                return retried
            } catch {
                if shown { setAside(id) }
                throw error
            }
        }
    }

    /// Shows the stored answer of failed item `id` again. Whether it was shown: not for an item that is not
    /// failed, or an answer that no longer fits its operation (hidden, as at ``restore()``).
    private func show(failed id: Int64) -> Bool {
        let sql = """
            SELECT o.query, o.variables, o.answer FROM \(Self.table) o JOIN \(OutboxStore.table) q ON q.id = o.item
            WHERE o.item = ? AND o.engine = ? AND q.state = 'failed'
            """
        guard let row = try? database.fetchAll(sql: sql, [id, engine]).first, let answer = Self.answer(id, row)
        else { return false }
        return (try? show(answer)) != nil
    }

    /// A failed item was dropped for good: its row goes (its layer went when it was set aside).
    func dropped(_ id: Int64) {
        setAside(id)
        shapes.withLock { _ = $0.removeValue(forKey: id) }
        _ = try? database.execute("DELETE FROM \(Self.table) WHERE item = ?", [id])
    }

    /// The answer stored in `row` (query, variables and answer columns) for item `id`; nil when it does not read.
    private static func answer(_ id: Int64, _ row: GQLValues) -> Answer? {
        guard let query = row["query"]?.stringValue,
            case .object(let variables)? = try? GQLValue(json: row["variables"]?.stringValue ?? ""),
            let data = try? GQLValue(json: row["answer"]?.stringValue ?? "")
        else { return nil }
        return Answer(item: id, query: query, variables: variables, data: data)
    }

    /// Shows the stored answers of the engine's pending items; keeps the rows of failed items (hidden, for a
    /// retry) and deletes the others'.
    private func restore() throws {
        let rows = try database.fetchAll(
            sql: """
                SELECT o.item, o.query, o.variables, o.answer, q.state FROM \(Self.table) o
                LEFT JOIN \(OutboxStore.table) q ON q.id = o.item WHERE o.engine = ?
                """, [engine])
        var stale: [Int64] = []
        for row in rows {
            guard let item = row["item"]?.intValue else { continue }
            let state = row["state"]?.stringValue
            if state == "failed" { continue }
            guard state == "pending", let answer = Self.answer(item, row) else {
                stale.append(item)
                continue
            }
            // An answer that no longer fits its operation is dropped rather than stopping the engine.
            if (try? show(answer)) == nil {
                stale.append(item)
            }
        }
        guard !stale.isEmpty else { return }
        try database.write { tx in
            for item in stale { _ = try tx.execute("DELETE FROM \(Self.table) WHERE item = ?", [item]) }
        }
    }
}
