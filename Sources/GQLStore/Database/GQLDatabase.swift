import Foundation
import GQLCore

/// A local SQLite database of plain Codable objects.
///
/// One writer connection serializes every write; a small pool of reader connections reads in parallel
/// (WAL mode). Every read sees every write that returned before it began. A database may be used from
/// any thread or task; the synchronous and `async` forms of its methods share their names.
///
/// ```swift
/// let db = try GQLDatabase()                        // database.sqlite in the app-data directory
/// let db = try GQLDatabase(file: "db.sqlite")       // same directory, other name
/// let db = try GQLDatabase(path: "yourpath/db.sqlite")
/// try db.write { tx in
///     try user.insert(tx)
///     try order.insert(tx)
/// }
/// ```
public final class GQLDatabase: Sendable {
    /// The database file's path.
    public let path: String
    /// The configuration the database was opened with.
    public let configuration: Configuration

    let writer: Writer
    let readers: ReaderPool?
    /// The key of an encrypted database (`nil` for a plain one); replaced by ``rekey(_:)``.
    let cipher: GQLLocked<CipherKey?>
    let registry = SchemaRegistry()
    let observers = ObserverCenter()

    /// Opens (creating if needed) `database.sqlite` in the platform's app-data directory:
    /// `$XDG_DATA_HOME/<executable>/` (or `~/.local/share/<executable>/`) on Linux,
    /// `Application Support/<bundle id or executable>/` on Apple platforms.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try self.init(file: "database.sqlite", configuration: configuration)
    }

    /// Opens (creating if needed) the file named `file` in the platform's app-data directory.
    public convenience init(file: String, configuration: Configuration = Configuration()) throws {
        guard !file.isEmpty, !file.contains("/") else {
            throw GQLError(.invalidArgument, "'\(file)' is not a file name; use GQLDatabase(path:) for paths")
        }
        let directory = try Self.defaultDirectory()
        try self.init(path: directory.appendingPathComponent(file).path, configuration: configuration)
    }

    /// Opens (creating if needed) the database at `path`; missing directories are created.
    /// `":memory:"` opens a private in-memory database (reads then share the writer connection). With
    /// ``Configuration/readOnly``, `path` may also be an SQLite URI (`file:/data/app.sqlite?immutable=1`), which
    /// SQLite checks itself.
    /// - Throws: ``GQLError`` `.keyRequired` when the file is encrypted (open it with ``init(path:key:configuration:)``).
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        if path != ":memory:" && !path.hasPrefix("file:"), case .encrypted = FileHeader.read(path) {
            throw GQLError(
                .keyRequired, "the database at \(path) is encrypted; open it with GQLDatabase(path:key:)",
                operation: "open")
        }
        try self.init(path: path, cipher: nil, configuration: configuration)
    }

    /// Opens the database at `path`, with `cipher` through the encrypting VFS (its key already checked).
    init(path: String, cipher: CipherKey?, configuration: Configuration) throws {
        guard !path.isEmpty else { throw GQLError(.invalidArgument, "the database path is empty") }
        if let size = configuration.pageSize, size < 512 || size > 65_536 || size & (size - 1) != 0 {
            throw GQLError(
                .invalidArgument, "the page size \(size) is not a power of two from 512 to 65,536", operation: "open")
        }
        self.configuration = configuration
        let inMemory = path == ":memory:"
        if configuration.readOnly && path.hasPrefix("file:") {
            // A URI: SQLite opens it (flags in it such as immutable=1), or says why not.
        } else if configuration.readOnly && !inMemory {
            guard FileManager.default.fileExists(atPath: path) else {
                throw GQLError(.io, "there is no database file at \(path) to open read-only", operation: "open")
            }
        } else if !inMemory {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw GQLError(.io, "cannot create the directory \(directory.path): \(error.localizedDescription)")
            }
        }
        self.path = path
        let cipher = GQLLocked(cipher)
        self.cipher = cipher
        writer = try Writer(
            path: path, configuration: configuration, observers: observers, cipher: cipher.withLock { $0 })
        if inMemory {
            readers = nil
        } else {
            readers = ReaderPool(maximum: configuration.maximumReaders) {
                try Connection(path: path, reader: true, configuration: configuration, cipher: cipher.withLock { $0 })
            }
        }
    }

    deinit {
        // Readers close first, so the writer is the last connection and can remove the -wal and -shm files.
        readers?.drain()
    }

    /// The directory new databases go to by default, created if needed.
    public static func defaultDirectory() throws -> URL {
        let fileManager = FileManager.default
        let name = ProcessInfo.processInfo.processName.isEmpty ? "GraphQLite" : ProcessInfo.processInfo.processName
        #if canImport(Darwin)
            let base = try fileManager.url(
                for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
            let directory = base.appendingPathComponent(Bundle.main.bundleIdentifier ?? name, isDirectory: true)
        #else
            let environment = ProcessInfo.processInfo.environment
            let base: URL
            if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
                base = URL(fileURLWithPath: xdg, isDirectory: true)
            } else {
                let home =
                    environment["HOME"].flatMap {
                        $0.hasPrefix("/") ? URL(fileURLWithPath: $0, isDirectory: true) : nil
                    }
                    ?? fileManager.homeDirectoryForCurrentUser
                base = home.appendingPathComponent(".local/share", isDirectory: true)
            }
            let directory = base.appendingPathComponent(name, isDirectory: true)
        #endif
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw GQLError(.io, "cannot create the directory \(directory.path): \(error.localizedDescription)")
        }
        return directory
    }

    // MARK: Transactions

    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    ///
    /// Observers hear about the changes after the commit, never about a rolled-back write; `origin`, when
    /// given, tags every change of the transaction (``GQLChange/origin``), so an observer can tell, say, rows
    /// pulled from a server from local edits. Hooks added with ``GQLTransaction/afterCommit(_:)`` and
    /// ``GQLTransaction/onRollback(_:)`` run after the outcome, before this returns.
    /// ```swift
    /// try db.write { tx in
    ///     try user.insert(tx)
    ///     try User.updateAll(tx, ["approved": true], "age > ?", [40])
    /// }
    /// try db.write(origin: "sync") { tx in try pulled.insertUpdate(tx) }
    /// ```
    /// - Throws: ``GQLError`` `.nestedWrite` when called from inside another write on this database;
    ///   `.closed` after ``close()``.
    @discardableResult
    public func write<T>(origin: String? = nil, _ body: (GQLTransaction) throws -> T) throws -> T {
        try write(origin: origin, synchronous: nil, body)
    }

    /// ``write(origin:_:)`` committed at `synchronous` rather than the configured level (`nil`: the configured
    /// one); the writer goes back to its configured level before the next write. For a module's own bookkeeping
    /// whose loss on power failure it can afford, e.g. GQLSync's delivery records in a `.full` outbox.
    @discardableResult
    package func write<T>(
        origin: String? = nil, synchronous: Configuration.Synchronous?, _ body: (GQLTransaction) throws -> T
    ) throws -> T {
        try transact(body) { try writer.write(transaction: true, origin: origin, synchronous: synchronous, $0) }
    }

    /// ``write(origin:_:)`` when no other thread is writing to this database now; `nil`, with nothing run, when
    /// one is. For a caller that should not wait for the writer, such as a server's event loop, which can hand
    /// the write to another thread instead.
    package func writeIfFree<T>(origin: String? = nil, _ body: (GQLTransaction) throws -> T) throws -> T? {
        try transact(body) { try writer.writeIfFree(transaction: true, origin: origin, $0) }
    }

    /// Runs `body` in the transaction `run` opens on the writer connection, then the commit or rollback hooks.
    private func transact<T, R>(
        _ body: (GQLTransaction) throws -> T, _ run: ((Connection) throws -> T) throws -> R
    ) throws -> R {
        var transaction: GQLTransaction?
        let result: R
        do {
            // `body` runs before `run` returns; the compiler cannot see that through two closures.
            result = try withoutActuallyEscaping(body) { body in
                try run { connection in
                    let tx = GQLTransaction(database: self, connection: connection, writes: true)
                    transaction = tx
                    defer { tx.end() }
                    return try body(tx)
                }
            }
        } catch {
            transaction?.runHooks(committed: false)
            throw error
        }
        if let transaction {
            registry.commit(transaction.pendingSchemas)
            transaction.runHooks(committed: true)
        }
        return result
    }

    /// Runs `body` in one read transaction: every read inside sees the same snapshot.
    ///
    /// ```swift
    /// let (users, count) = try db.read { tx in (try User.fetchAll(tx), try User.count(tx)) }
    /// ```
    public func read<T>(_ body: (GQLTransaction) throws -> T) throws -> T {
        try withReader { connection in
            // A read nested in another read on this thread shares the outer snapshot.
            let outermost = connection.isAutocommit
            if outermost { try connection.cached("BEGIN DEFERRED").runOnce() }
            defer { if outermost { try? connection.cached("COMMIT").runOnce() } }
            let tx = GQLTransaction(database: self, connection: connection, writes: false)
            defer { tx.end() }
            return try body(tx)
        }
    }

    /// Runs raw SQL (one or more statements) on the writer and returns the number of rows it changed.
    /// `arguments` bind to the first statement; a later statement with parameters is an error.
    ///
    /// ```swift
    /// try db.execute("DELETE FROM User WHERE age = 42;")
    /// try db.execute("UPDATE User SET age = ? WHERE userId = ?", [43, 1001])
    /// ```
    @discardableResult
    public func execute(_ sql: String, _ arguments: GQLArguments = GQLArguments()) throws -> Int {
        defer { schemaMayHaveChanged() }
        return try writer.write(transaction: false) { connection in
            let changed = try connection.execute(sql, arguments)
            guard connection.isAutocommit else {
                // A BEGIN without its COMMIT would leave the shared writer inside a transaction after the
                // lock is released, and every later write would join it.
                _ = try? connection.execute("ROLLBACK")
                throw GQLError(
                    .invalidArgument,
                    "the SQL left a transaction open, so it was rolled back; use db.write { } for transactions",
                    sql: sql)
            }
            return changed
        }
    }

    /// Closes the database: waits for the reads and the write in progress, then closes every connection.
    ///
    /// Closing twice is harmless. After it, every read and write fails with ``GQLError`` `.closed`; a read
    /// or write waiting for a connection when it is called fails the same way. Observer callbacks of writes
    /// that committed before still run. Use it in tests, or to switch an app to another user's file.
    /// ```swift
    /// try db.close()
    /// try User.count(db)       // throws GQLError .closed
    /// ```
    /// - Throws: ``GQLError`` `.nestedWrite` or `.invalidArgument` when called from inside one of this
    ///   database's own writes or reads, which would wait for themselves.
    public func close() throws {
        if writer.isHeldByCurrentThread {
            throw GQLError(
                .nestedWrite, "the database cannot be closed from inside one of its own writes", operation: "close")
        }
        try readers?.close()
        try writer.close()
    }

    /// Returns once every observer callback for the writes committed so far has run.
    ///
    /// ```swift
    /// try user.insert(db)
    /// await db.observersIdle()    // the insert's callbacks have run
    /// ```
    public func observersIdle() async {
        await observers.drain()
    }

    // MARK: Internals shared by the verbs

    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        if let readers { return try readers.read(body) }
        return try writer.write(transaction: false, body)
    }

    /// Forgets which tables are known to exist, after raw SQL that may have changed the schema.
    func schemaMayHaveChanged() {
        registry.forgetInstalled()
    }
}
