import CSQLite
import Foundation
import GQLCore
import Synchronization

/// The one connection that writes, and the lock that serializes every write.
///
/// Also collects the observer events SQLite triggers report while a write runs, and hands them to the
/// observer center once the write has committed (or forgets them when it rolls back).
final class Writer: @unchecked Sendable {
    // Safety: `connection`, `pending` and `depth` are only touched by the thread that holds `lock`
    // (recorded in `owner`); `owner` itself is atomic.
    private let lock = NSLock()
    private let owner = Atomic<UInt>(0)
    let connection: Connection
    /// Events reported by triggers during the current write, in order.
    var pending: [ObserverEvent] = []
    /// Called, with the lock still held, when a write ended committed, so the events keep commit order.
    /// Receives the write's origin tag.
    var committed: (([ObserverEvent], String?) -> Void)?
    /// The origin tag of the write in progress, handed on with its events.
    private var origin: String?
    /// Set by ``close()``: every later write fails with `.closed`.
    private var isClosed = false
    private var pendingMark = 0
    /// Tables whose observer triggers changed inside the current transaction.
    private var triggerTables: Set<String> = []
    /// Rebuilds the triggers of these tables after a rollback undid their changes.
    var rolledBackTriggers: ((Set<String>) -> Void)?
    /// The SET values of the UPDATE being run, read by the `gql_update_value(i)` SQL function. Kept out of
    /// the statement's parameters so the condition's own `?`, `?NNN` and named parameters keep their numbers.
    var updateValues: [GQLValue] = []
    static let updateValueFunction = "gql_update_value"

    init(connection: Connection) {
        self.connection = connection
        // unowned(unsafe): the writer owns the connection, so these closures never outlive it.
        connection.statementStarted = { [unowned(unsafe) self] in pendingMark = pending.count }
        connection.statementDone = { [unowned(unsafe) self] in
            // After COMMIT, or after a statement that committed on its own.
            if self.connection.isAutocommit { flush() }
        }
        connection.statementFailed = { [unowned(unsafe) self] in
            // A failed statement undid its own changes: forget the events its triggers reported.
            if pending.count > pendingMark { pending.removeSubrange(pendingMark...) }
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_rollback_hook(
            connection.handle,
            { context in
                guard let context else { return }
                Unmanaged<Writer>.fromOpaque(context).takeUnretainedValue().pending.removeAll()
            }, context)
        installUpdateValueFunction()
    }

    /// Registers `gql_update_value(i)`, which returns `updateValues[i]`.
    private func installUpdateValueFunction() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_create_function_v2(
            connection.handle, Self.updateValueFunction, 1, SQLITE_UTF8, context,
            { context, count, arguments in
                guard let context, count == 1, let arguments, let indexArg = arguments[0] else { return }
                let writer = Unmanaged<Writer>.fromOpaque(UnsafeRawPointer(sqlite3_user_data(context)))
                    .takeUnretainedValue()
                let index = Int(sqlite3_value_int64(indexArg))
                guard writer.updateValues.indices.contains(index) else {
                    sqlite3_result_error(context, "gql_update_value: no value \(index)", -1)
                    return
                }
                switch writer.updateValues[index] {
                case .null: sqlite3_result_null(context)
                case .bool(let b): sqlite3_result_int64(context, b ? 1 : 0)
                case .int(let i): sqlite3_result_int64(context, i)
                case .double(let d): sqlite3_result_double(context, d)
                case .string(let text): Writer.result(text, context)
                case .data(let data):
                    data.withUnsafeBytes { buffer in
                        guard let base = buffer.baseAddress, buffer.count > 0 else {
                            return sqlite3_result_zeroblob(context, 0)  // empty, not NULL
                        }
                        sqlite3_result_blob(context, base, Int32(buffer.count), SQLITE_TRANSIENT)
                    }
                case let nested: Writer.result((try? nested.jsonString()) ?? "null", context)
                }
            }, nil, nil, nil)
    }

    /// Returns text with its exact length, so an embedded NUL does not cut it short.
    private static func result(_ text: String, _ context: OpaquePointer?) {
        var text = text
        text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return sqlite3_result_text(context, "", 0, SQLITE_TRANSIENT) }
                sqlite3_result_text(context, base, Int32(chars.count), SQLITE_TRANSIENT)
            }
        }
    }

    deinit {
        if !connection.isClosed { sqlite3_rollback_hook(connection.handle, nil, nil) }
    }

    static var currentThread: UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }

    /// Whether the calling thread is inside a write of this writer.
    var isHeldByCurrentThread: Bool { owner.load(ordering: .acquiring) == Self.currentThread }

    /// Runs `body` with the writer connection.
    ///
    /// - Parameter transaction: wrap `body` in `BEGIN IMMEDIATE` … `COMMIT` (rolled back when it throws).
    ///   Without it each statement commits on its own.
    func write<T>(transaction: Bool, origin: String? = nil, _ body: (Connection) throws -> T) throws -> T {
        let me = Self.currentThread
        if owner.load(ordering: .acquiring) == me {
            throw GQLError(
                .nestedWrite,
                "a write was started inside another write on the same database; use the transaction (tx) you were given"
            )
        }
        lock.lock()
        owner.store(me, ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            lock.unlock()
        }
        guard !isClosed else { throw GQLError(.closed, "the database was closed", operation: "write") }
        self.origin = origin
        defer { self.origin = nil }
        return try withHeld(transaction: transaction, body)
    }

    /// Waits for the write in progress, then closes the connection; later writes fail with `.closed`.
    /// - Returns: `false` when the writer was already closed.
    @discardableResult
    func close() throws -> Bool {
        if isHeldByCurrentThread {
            throw GQLError(
                .nestedWrite, "the database cannot be closed from inside one of its own writes", operation: "close")
        }
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { return false }
        isClosed = true
        connection.close()
        return true
    }

    /// Like ``write(transaction:_:)``, but reentrant: runs inline when the calling thread already writes.
    func writeReentrant<T>(_ body: (Connection) throws -> T) throws -> T {
        if isHeldByCurrentThread { return try body(connection) }
        return try write(transaction: false, body)
    }

    private func withHeld<T>(transaction: Bool, _ body: (Connection) throws -> T) throws -> T {
        guard transaction else { return try body(connection) }
        try connection.cached("BEGIN IMMEDIATE").runOnce()
        triggerTables.removeAll()
        do {
            connection.requiresTransaction = true
            let result = try body(connection)
            connection.requiresTransaction = false
            try connection.cached("COMMIT").runOnce()  // its completion hands the events on
            return result
        } catch {
            connection.requiresTransaction = false
            if !connection.isAutocommit { try? connection.cached("ROLLBACK").runOnce() }
            pending.removeAll()
            if !triggerTables.isEmpty {
                // Observers added or removed inside the write lost their trigger changes with it.
                let tables = triggerTables
                triggerTables.removeAll()
                rolledBackTriggers?(tables)
            }
            throw error
        }
    }

    /// Notes that observer triggers of `table` changed inside the current write.
    func triggersChanged(_ table: String) {
        if !connection.isAutocommit { triggerTables.insert(table) }
    }

    private func flush() {
        pendingMark = 0
        guard !pending.isEmpty else { return }
        let events = pending
        pending.removeAll(keepingCapacity: true)
        committed?(events, origin)
    }
}

extension Statement {
    /// Steps a statement that returns no rows, then resets it.
    func runOnce() throws {
        defer { reset() }
        while try step() {}
    }
}
