import GQLStore

extension OutboxStore {
    /// The columns of an item after its id, the same in every layout so far (a step that changes them spells
    /// out its own).
    private static let itemColumns = """
        engine TEXT NOT NULL, mode TEXT NOT NULL, name TEXT NOT NULL, key TEXT, query TEXT NOT NULL,
        input TEXT NOT NULL, wrap TEXT, idempotency TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'pending', error TEXT, created_at TEXT NOT NULL, failed_at TEXT
        """

    /// The migrator of the outbox's tables.
    static var migrator: GQLMigrator { migrator(through: .max) }

    /// The migrator up to step `last` (a test builds an outbox of an earlier layout with it).
    ///
    /// Step 3 shapes the outbox so that queueing an item, which runs inside the app's own writes, adds as few
    /// written pages to the commit as it can: the table's own row and nothing else in the usual case.
    /// - No `AUTOINCREMENT` (it rewrote `sqlite_sequence` on every insert): an id is one more than the largest
    ///   id in the table and than `_gqlsync_sequence.last_id`, the largest id ever removed, which the delivery
    ///   loop's own transactions keep. Ids still only grow, and are never reused.
    /// - No index on `(engine, state, id)`: a claim reads the table in id order, which is call order.
    /// - The key index holds only the items a later `lazy` call may merge into (`mode = 'lazy'`); a call of
    ///   another kind for the same key turns them `steady` (looked up in that index, so nothing is written when
    ///   there is none). Failed items have their own small index.
    ///
    /// Step 6 shrinks a row: the operation's name, text and input argument go into `_gqlsync_operations`, once
    /// per distinct operation, and the row keeps its id (`op`); a new row's idempotency key is the outbox's
    /// identity and a 64-bit `nonce` of the row's (8 bytes, not 40 of text; items queued before keep their stored
    /// key); `created_at` is milliseconds since 1970, bound by the caller instead of formatted by SQLite.
    ///
    /// Step 7 drops the id expression of the insert (the largest id of the table and of `_gqlsync_sequence`, two
    /// look-ups in the app's write): the id is SQLite's own, one more than the table's largest, and when the
    /// largest id leaves, a tombstone row (state `removed`, no engine, no operation) keeps it in the table; the
    /// sequence's last removed id becomes that row, and the sequence table keeps only the outbox's identity.
    ///
    /// Step 4 moved that turning into a trigger of the insert; step 5 drops it again, and enqueue runs the turning
    /// only while the engine may have lazy items (``OutboxStore/LazyPresence``).
    ///
    /// Step 8 keys a pull cursor by the pull's variables (their JSON with sorted members, `''` for none) as well as
    /// the engine and the query.
    static func migrator(through last: Int) -> GQLMigrator {
        var migrator = GQLMigrator(namespace: namespace)
        migrator.step(1, "outbox") { tx in
            try tx.execute("CREATE TABLE \(table) (id INTEGER PRIMARY KEY AUTOINCREMENT, \(itemColumns))")
            try tx.execute("CREATE INDEX \(table)_queue ON \(table)(engine, state, id)")
            try tx.execute("CREATE INDEX \(table)_key ON \(table)(engine, key, id)")
        }
        guard last >= 2 else { return migrator }
        migrator.step(2, "pull cursors") { tx in
            try tx.execute(
                """
                CREATE TABLE \(cursorTable) (
                    engine TEXT NOT NULL,
                    query TEXT NOT NULL,
                    started_at INTEGER NOT NULL,
                    taken_at INTEGER NOT NULL,
                    PRIMARY KEY (engine, query)
                )
                """)
        }
        guard last >= 3 else { return migrator }
        migrator.step(3, "outbox without autoincrement, with a lazy-only key index") { tx in
            try tx.execute("CREATE TABLE \(table)_3 (id INTEGER PRIMARY KEY, \(itemColumns))")
            try tx.execute(
                """
                INSERT INTO \(table)_3 (id, engine, mode, name, key, query, input, wrap, idempotency, attempts, state,
                    error, created_at, failed_at)
                SELECT id, engine, mode, name, key, query, input, wrap, idempotency, attempts, state, error,
                    created_at, failed_at FROM \(table)
                """)
            try tx.execute("CREATE TABLE \(sequenceTable) (name TEXT PRIMARY KEY, last_id INTEGER NOT NULL)")
            // The old table's AUTOINCREMENT counter: ids handed out before stay unused.
            try tx.execute(
                """
                INSERT INTO \(sequenceTable) (name, last_id)
                VALUES ('outbox', coalesce((SELECT seq FROM sqlite_sequence WHERE name = '\(table)'), 0))
                """)
            try tx.execute("DROP TABLE \(table)")
            try tx.execute("ALTER TABLE \(table)_3 RENAME TO \(table)")
            try tx.execute("CREATE INDEX \(lazyIndex) ON \(table)(engine, key, id) WHERE mode = 'lazy'")
            try tx.execute("CREATE INDEX \(table)_failed ON \(table)(engine, id) WHERE state = 'failed'")
        }
        guard last >= 4 else { return migrator }
        migrator.step(4, "lazy items of a key turned steady by a trigger of the insert") { tx in
            // What enqueue did with a statement of its own before every keyed call that is not lazy; in a trigger
            // it costs the app's write no round trip (the partial key index finds the few lazy items, or none).
            try tx.execute(
                """
                CREATE TRIGGER \(table)_order AFTER INSERT ON \(table)
                WHEN NEW.mode <> 'lazy' AND NEW.key IS NOT NULL
                BEGIN
                    UPDATE \(table) SET mode = 'steady' WHERE engine = NEW.engine AND key = NEW.key AND mode = 'lazy';
                END
                """)
        }
        guard last >= 5 else { return migrator }
        migrator.step(5, "no trigger on the insert") { tx in
            // The trigger ran on every insert, lazy items or not, and cost about as much as the rest of queueing an
            // item; enqueue turns a key's lazy items steady itself again, only when the engine may have any.
            try tx.execute("DROP TRIGGER IF EXISTS \(table)_order")
        }
        guard last >= 6 else { return migrator }
        migrator.step(6, "operation texts stored once, compact idempotency keys, dates as numbers") { tx in
            // Each distinct operation (name, text, input argument) once; AUTOINCREMENT so that an id, once given,
            // always means the same operation (a delivery loop keeps what it read by id).
            try tx.execute(
                """
                CREATE TABLE \(operationTable) (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, query TEXT NOT NULL, wrap TEXT
                )
                """)
            try tx.execute(
                """
                INSERT INTO \(operationTable) (name, query, wrap)
                SELECT DISTINCT name, query, wrap FROM \(table)
                """)
            try tx.execute(
                """
                CREATE TABLE \(table)_6 (
                    id INTEGER PRIMARY KEY, engine TEXT NOT NULL, mode TEXT NOT NULL, op INTEGER NOT NULL, key TEXT,
                    input TEXT NOT NULL, idempotency TEXT, nonce INTEGER,
                    attempts INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL DEFAULT 'pending', error TEXT,
                    created_at INTEGER NOT NULL, failed_at TEXT
                )
                """)
            // An item queued before keeps its idempotency key (it may be in flight at the crash that preceded
            // this upgrade, and is then sent again with the same key); its date becomes milliseconds.
            try tx.execute(
                """
                INSERT INTO \(table)_6 (id, engine, mode, op, key, input, idempotency, attempts, state, error,
                    created_at, failed_at)
                SELECT o.id, o.engine, o.mode,
                    (SELECT p.id FROM \(operationTable) p
                     WHERE p.name = o.name AND p.query = o.query AND p.wrap IS o.wrap),
                    o.key, o.input, o.idempotency, o.attempts, o.state, o.error,
                    coalesce(CAST((julianday(o.created_at) - 2440587.5) * 86400000 AS INTEGER), 0), o.failed_at
                FROM \(table) o
                """)
            try tx.execute("DROP TABLE \(table)")
            try tx.execute("ALTER TABLE \(table)_6 RENAME TO \(table)")
            try tx.execute("CREATE INDEX \(lazyIndex) ON \(table)(engine, key, id) WHERE mode = 'lazy'")
            try tx.execute("CREATE INDEX \(table)_failed ON \(table)(engine, id) WHERE state = 'failed'")
        }
        guard last >= 7 else { return migrator }
        migrator.step(7, "the largest removed id kept by a tombstone row") { tx in
            // SQLite makes a new id from the table's largest; the sequence's last removed id, when larger than
            // every id left, becomes a row of the table so that it is never made again.
            try tx.execute(
                """
                INSERT INTO \(table) (id, engine, mode, op, input, state, created_at)
                SELECT last_id, '', 'steady', 0, '', 'removed', 0 FROM \(sequenceTable)
                WHERE name = 'outbox' AND last_id > coalesce((SELECT max(id) FROM \(table)), 0)
                """)
        }
        guard last >= 8 else { return migrator }
        migrator.step(8, "pull cursors keyed by the pull's variables too") { tx in
            // Two pulls of one query with other variables (a filter) are two cursors; a cursor kept before is a
            // pull without variables (''), as the pulls that made it most likely were.
            try tx.execute(
                """
                CREATE TABLE \(cursorTable)_8 (
                    engine TEXT NOT NULL,
                    query TEXT NOT NULL,
                    variables TEXT NOT NULL DEFAULT '',
                    started_at INTEGER NOT NULL,
                    taken_at INTEGER NOT NULL,
                    PRIMARY KEY (engine, query, variables)
                )
                """)
            try tx.execute(
                """
                INSERT INTO \(cursorTable)_8 (engine, query, variables, started_at, taken_at)
                SELECT engine, query, '', started_at, taken_at FROM \(cursorTable)
                """)
            try tx.execute("DROP TABLE \(cursorTable)")
            try tx.execute("ALTER TABLE \(cursorTable)_8 RENAME TO \(cursorTable)")
        }
        return migrator
    }
}
