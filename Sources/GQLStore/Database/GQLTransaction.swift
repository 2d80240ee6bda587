import GQLCore

/// An open transaction, handed to the closure of ``GQLDatabase/write(_:)`` or ``GQLDatabase/read(_:)``.
///
/// Every verb that takes a database also takes a transaction; inside the closure, pass `tx` so the work
/// joins the transaction. A transaction is only valid inside its closure.
///
/// ```swift
/// try db.write { tx in
///     try user.insert(tx)
///     let count = try User.count(tx)      // sees the insert
/// }
/// ```
public final class GQLTransaction: GQLDatabaseContext {
    /// The database the transaction belongs to.
    public let database: GQLDatabase
    /// Whether the transaction may write (it came from `write`, not `read`).
    public let isWritable: Bool
    let connection: Connection
    private(set) var isActive = true
    /// Tables this transaction created or altered; known to the database once it commits.
    var pendingSchemas: [(ObjectIdentifier?, TableSchema)] = []
    /// Schemas already looked up in this transaction: a loop of inserts skips the registry's lock.
    var schemaCache: [ObjectIdentifier: TableSchema] = [:]
    /// The schema found last, checked before `schemaCache`.
    var lastSchemaType: ObjectIdentifier?
    var lastSchema: TableSchema?
    /// Hooks registered with ``afterCommit(_:)`` and ``onRollback(_:)``, in registration order.
    private var commitHooks: [() -> Void] = []
    private var rollbackHooks: [() -> Void] = []

    init(database: GQLDatabase, connection: Connection, writes: Bool) {
        self.database = database
        self.connection = connection
        self.isWritable = writes
    }

    public var transaction: GQLTransaction? { self }

    func end() { isActive = false }

    /// Runs `body` once, after this write transaction has committed.
    ///
    /// The hook runs on the thread that called ``GQLDatabase/write(origin:_:)``, after the commit is durable and
    /// the writer is free again, and before `write` returns — so it may write to the database again, like an
    /// observer callback. Hooks run in the order they were added. A transaction that rolls back (its closure
    /// threw, or the commit failed) never runs its commit hooks.
    /// ```swift
    /// try db.write { tx in
    ///     try item.insert(tx)
    ///     try tx.afterCommit { outbox.wake() }      // only once the insert is on disk
    /// }
    /// ```
    /// - Throws: ``GQLError`` `.closed` after the transaction's closure returned; `.invalidArgument` in a
    ///   read transaction.
    public func afterCommit(_ body: @escaping () -> Void) throws {
        try checkHookable("afterCommit")
        commitHooks.append(body)
    }

    /// Runs `body` once, after this write transaction has rolled back.
    ///
    /// The hook runs on the thread that called ``GQLDatabase/write(origin:_:)``, after the rollback and with the
    /// writer free again, before `write` rethrows the error that caused it. Hooks run in the order they were
    /// added. A committed transaction never runs its rollback hooks.
    /// ```swift
    /// try db.write { tx in
    ///     cache.markDirty(key)
    ///     try tx.onRollback { cache.forget(key) }   // undo what the database undid
    ///     try item.update(tx)
    /// }
    /// ```
    /// - Throws: ``GQLError`` `.closed` after the transaction's closure returned; `.invalidArgument` in a
    ///   read transaction.
    public func onRollback(_ body: @escaping () -> Void) throws {
        try checkHookable("onRollback")
        rollbackHooks.append(body)
    }

    private func checkHookable(_ name: String) throws {
        guard isActive else {
            throw GQLError(.closed, "tx.\(name) was called after the transaction's closure returned")
        }
        guard isWritable else {
            throw GQLError(.invalidArgument, "tx.\(name) needs a write transaction (db.write { }), not db.read { }")
        }
    }

    /// Runs the hooks of the outcome, once: the other outcome's hooks are dropped.
    func runHooks(committed: Bool) {
        let hooks = committed ? commitHooks : rollbackHooks
        commitHooks.removeAll()
        rollbackHooks.removeAll()
        for hook in hooks { hook() }
    }

    /// The connection, after checking the transaction is still open (and writable when `write`).
    func checkedConnection(write: Bool) throws -> Connection {
        guard isActive else {
            throw GQLError(.closed, "the transaction was used after its closure returned")
        }
        if write && !isWritable {
            throw GQLError(.invalidArgument, "cannot write inside db.read { }; use db.write { }")
        }
        return connection
    }
}

/// Something the verbs can run against: a ``GQLDatabase`` or an open ``GQLTransaction``.
///
/// ```swift
/// try user.insert(db)                    // its own transaction
/// try db.write { tx in try user.insert(tx) }   // part of a bigger one
/// ```
public protocol GQLDatabaseContext {
    /// The database.
    var database: GQLDatabase { get }
    /// The open transaction to run in, or `nil` to let each call use the database's own connections.
    var transaction: GQLTransaction? { get }
}

extension GQLDatabase: GQLDatabaseContext {
    public var database: GQLDatabase { self }
    public var transaction: GQLTransaction? { nil }
}

extension GQLDatabaseContext {
    /// Runs `body` on a connection that can read: the transaction's, or one from the reader pool.
    func withReadConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        if let tx = transaction { return try body(try tx.checkedConnection(write: false)) }
        return try database.withReader(body)
    }

    /// Runs `body` on the writer: inside the transaction, or as its own autocommit write.
    func withWriteConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        if let tx = transaction { return try body(try tx.checkedConnection(write: true)) }
        return try database.writer.write(transaction: false, body)
    }

    /// Runs `body` atomically on the writer: inside the transaction, or in a transaction of its own.
    func withWriteTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        if let tx = transaction { return try body(try tx.checkedConnection(write: true)) }
        return try database.writer.write(transaction: true, body)
    }
}
