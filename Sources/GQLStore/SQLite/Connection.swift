import CSQLite
import CStoreCrypt
import Foundation
import GQLCore

/// SQLite's "copy this buffer now" destructor; a macro in C, so it is rebuilt here.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection with a prepared-statement cache.
///
/// Not thread-safe: a connection is only used by the holder of its lock (the writer) or by the task that
/// checked it out of the reader pool.
final class Connection {
    let handle: OpaquePointer
    let path: String
    let isReader: Bool
    private var cache: [String: Statement] = [:]
    private var verbCache: [Int: Statement] = [:]
    private var lastVerbKey = -1
    private var lastVerbStatement: Statement?
    /// The SQL of the last ``cached(_:)`` statement and the statement: a loop that repeats one read (a server's
    /// `getT` by key) finds it with one comparison, which is immediate for the same `String`, instead of hashing
    /// the text (about 1,000 instructions for a model's select, `Benchmarks/callgrind-server.sh`).
    private var lastSQL: (sql: String, statement: Statement)?
    private(set) var isClosed = false
    /// The writer's session, which its statements report to as they start, finish and fail; `nil` on readers.
    let session: WriteSession?
    static let log = GQLDebug.logger("GQLStore")

    /// Opens `path`; with `cipher`, through the encrypting VFS with that key, temporary files kept in memory and, on
    /// a connection that writes, the page's reserved bytes asked for (they take effect when the file is created).
    init(
        path: String, reader: Bool, configuration: GQLDatabase.Configuration, session: WriteSession? = nil,
        cipher: CipherKey? = nil
    ) throws {
        self.path = path
        self.isReader = reader
        self.session = session
        var db: OpaquePointer?
        let readOnly = reader || configuration.readOnly
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let rc = sqlite3_open_v2(cipher?.uri(path) ?? path, &db, flags, cipher == nil ? nil : gqlcrypt_vfs_name())
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
            if let db { sqlite3_close_v2(db) }
            // SQLite reads the header of page 1 while it opens: an encrypted file replaced since its key was checked
            // fails there.
            if let failure = GQLError.pageFailure(sql: nil, table: nil, sqliteCode: extended) { throw failure }
            throw GQLError(
                .io, "cannot open database at \(path): \(message)", operation: "open", sqliteCode: rc)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(clamping: configuration.busyTimeoutMilliseconds))
        do {
            // Reading a page back from an encrypted file costs a decryption: by default keep up to 8 MB of pages per
            // encrypted connection (SQLCipher 4's default, against SQLite's 2 MB), so lookups over a working set of
            // that size decrypt each page once. Plain connections keep SQLite's default unless configured.
            if let kib = configuration.pageCacheKiB ?? (cipher == nil ? nil : 8_000) {
                try execute("PRAGMA cache_size = -\(max(kib, 1))")
            }
            // Before anything writes page 1 (the cipher's header below, the WAL switch): once the file has pages,
            // or is in WAL mode, SQLite keeps the size it has.
            if !readOnly, let size = configuration.pageSize, try scalar("PRAGMA page_count") == .int(0) {
                try execute("PRAGMA page_size = \(size)")
            }
            if cipher != nil {
                try execute("PRAGMA temp_store = MEMORY")
                if !readOnly {
                    reserveBytes(CipherKey.reserve)
                    // A new file gets its page 1 (file id, salt) now, in rollback mode: in WAL mode it would sit only
                    // in the WAL, and a crash before the first checkpoint would leave a file with no salt to read.
                    if try scalar("PRAGMA page_count") == .int(0) { try execute("PRAGMA user_version = 0") }
                }
            }
            if !readOnly && !configuration.rollbackJournal {
                try execute("PRAGMA journal_mode = WAL")
                try execute("PRAGMA synchronous = \(configuration.synchronous.rawValue)")
            }
            try execute("PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
        session?.install(on: db)
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the handle; later uses fail with SQLite's "misuse" error.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        cache.removeAll()
        verbCache.removeAll()
        lastVerbKey = -1
        lastVerbStatement = nil
        lastSQL = nil
        sqlite3_close_v2(handle)
    }

    /// A prepared statement for `sql`, reused across calls. The statement is reset and unbound.
    func cached(_ sql: String) throws -> Statement {
        if let last = lastSQL, last.sql == sql { return last.statement }
        let statement: Statement
        if let known = cache[sql] {
            statement = known
        } else {
            statement = try prepare(sql)
            cache[sql] = statement
        }
        lastSQL = (sql, statement)
        return statement
    }

    /// The prepared statement of one of a schema's verbs, reused across calls.
    @inline(__always)
    func statement(_ schema: TableSchema, _ verb: TableSchema.Verb) throws -> Statement {
        let key = schema.id &* 8 &+ verb.rawValue
        // Loops repeat one verb: check the last statement before hashing.
        if key == lastVerbKey, let statement = lastVerbStatement { return statement }
        let statement: Statement
        if let cached = verbCache[key] {
            statement = cached
        } else {
            statement = try prepare(schema.sql(verb))
            verbCache[key] = statement
        }
        lastVerbKey = key
        lastVerbStatement = statement
        return statement
    }

    /// Prepares exactly one statement.
    func prepare(_ sql: String) throws -> Statement {
        var stmt: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        var extra = false
        let rc = sql.withCString { start -> Int32 in
            let rc = sqlite3_prepare_v3(handle, start, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, &tail)
            if var p = tail {
                while p.pointee != 0 {
                    let c = UInt8(bitPattern: p.pointee)
                    if c != 0x20 && c != 0x09 && c != 0x0A && c != 0x0D && c != UInt8(ascii: ";") {
                        extra = true
                        break
                    }
                    p += 1
                }
            }
            return rc
        }
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
        if extra {
            sqlite3_finalize(stmt)
            throw GQLError(.invalidArgument, "expected one SQL statement, found more text after it", sql: sql)
        }
        guard let stmt else {
            throw GQLError(.invalidArgument, "the SQL text holds no statement", sql: sql)
        }
        return Statement(stmt, connection: self, sql: sql)
    }

    /// Runs every statement of `sql` in order, discarding rows, and returns the rows the script changed.
    ///
    /// `arguments` bind to the first statement; a later statement with parameters is an error rather than
    /// silently running with NULLs.
    @discardableResult
    func execute(_ sql: String, _ arguments: GQLArguments = GQLArguments()) throws -> Int {
        var remaining = Substring(sql)
        var changed = 0
        var index = 0
        while true {
            let trimmed = remaining.drop(while: { $0.isWhitespace || $0 == ";" })
            if trimmed.isEmpty { break }
            var stmt: OpaquePointer?
            var consumed = 0
            let text = String(trimmed)
            let rc = text.withCString { start -> Int32 in
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(handle, start, -1, &stmt, &tail)
                if let tail { consumed = start.distance(to: tail) }
                return rc
            }
            guard rc == SQLITE_OK else { throw error(rc, sql: text) }
            let utf8 = text.utf8
            let statementText = String(decoding: utf8.prefix(consumed), as: UTF8.self)
            remaining = Substring(String(decoding: utf8.dropFirst(consumed), as: UTF8.self))
            guard let stmt else { continue }  // a comment
            let statement = Statement(stmt, connection: self, sql: statementText)
            if index == 0 {
                try statement.bind(arguments)
            } else if statement.parameterCount > 0 {
                throw GQLError(
                    .invalidArgument,
                    "statement \(index + 1) of the script has parameters; only the first statement takes arguments",
                    sql: statementText)
            }
            index += 1
            let before = sqlite3_total_changes64(handle)
            while try statement.step() {}
            // Only statements that changed rows count (DDL leaves sqlite3_changes at the previous value).
            if sqlite3_total_changes64(handle) != before { changed += Int(sqlite3_changes(handle)) }
        }
        return changed
    }

    /// Asks SQLite to keep `count` bytes at the end of every page: applied when the file is created, or by the next
    /// VACUUM (INTO) of an existing one.
    func reserveBytes(_ count: Int32) {
        var count = count
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_RESERVE_BYTES, &count)
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// A ``GQLError`` from SQLite's current error state.
    func error(_ rc: Int32, sql: String?, table: String? = nil) -> GQLError {
        Self.error(handle, rc, sql: sql, table: table)
    }

    /// A ``GQLError`` from the error state of the connection `handle`.
    static func error(_ handle: OpaquePointer?, _ rc: Int32, sql: String?, table: String? = nil) -> GQLError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection"
        log.error("SQLite error \(rc): \(message)")
        let code = handle.map { sqlite3_extended_errcode($0) } ?? rc
        if let failure = GQLError.pageFailure(sql: sql, table: table, sqliteCode: code) { return failure }
        return GQLError(.sqlite, "SQLite error \(rc): \(message)", sql: sql, table: table, sqliteCode: code)
    }

    /// Rows of an arbitrary query with its columns in order.
    func rowSet(_ sql: String, _ arguments: GQLArguments) throws -> GQLRows {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        let columns = (0..<statement.columnCount).map(statement.columnName)
        var rows: [[GQLValue]] = []
        while try statement.step() { rows.append((0..<statement.columnCount).map(statement.value(at:))) }
        return GQLRows(columns: columns, rows: rows)
    }

    /// Rows of an arbitrary query as dictionaries.
    func rows(_ sql: String, _ arguments: GQLArguments) throws -> [GQLValues] {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var rows: [GQLValues] = []
        while try statement.step() { rows.append(statement.row()) }
        return rows
    }

    /// The first column of the first row, or `nil` when there is no row.
    func scalar(_ sql: String, _ arguments: GQLArguments = GQLArguments()) throws -> GQLValue? {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        // Not a `? :` expression: GQLValue is ExpressibleByNilLiteral, so `nil` there would mean `.null`.
        guard try statement.step() else { return Optional<GQLValue>.none }
        return statement.value(at: 0)
    }
}

extension Connection {
    /// Runs a cached write statement with `values` bound in order.
    @inline(__always)
    func run(_ sql: String, _ values: [GQLValue], blob: UnsafeRawBufferPointer? = nil, table: String) throws {
        let statement = try cached(sql)
        defer {
            statement.reset()
            // SQLite must keep no pointer to the caller's bytes once this returns.
            if blob != nil { statement.unbind(at: Int32(values.count + 1)) }
        }
        for (i, value) in values.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
        if let blob { try statement.bindInPlace(blob, at: Int32(values.count + 1)) }
        do {
            while try statement.step() {}
        } catch var error as GQLError {
            error.table = error.table ?? table
            throw error
        }
    }
}

extension Connection {
    /// Binds `object` into a schema's INSERT, upsert or UPDATE statement, runs it, and returns the changes.
    @inline(__always)
    func write<T: Encodable>(_ object: T, _ schema: TableSchema, _ verb: TableSchema.Verb) throws -> Int {
        let statement = try statement(schema, verb)
        defer { statement.reset() }
        let keyParameter = verb == .update ? Int32(schema.columns.count + 1) : nil
        try BindingEncoder.reused(for: statement, schema: schema, keyParameter: keyParameter).bind(object)
        do {
            while try statement.step() {}
        } catch var error as GQLError {
            error.table = error.table ?? schema.name
            throw error
        }
        return changes
    }
}
