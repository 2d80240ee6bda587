import CSQLite
import Foundation
import GQLCore
import Synchronization

/// The one connection that writes, and the lock that serializes every write.
///
/// Its state — the connection, the write in progress, the tables whose observer triggers it changed, whether
/// it is closed — changes only through its own methods, and only on the thread that holds `lock`. The events
/// SQLite's triggers report while a write runs go to the connection's ``WriteSession``, which hands them to
/// the observer center once the write has committed (or forgets them when it rolls back).
final class Writer: @unchecked Sendable {
    // Safety: `connection`, `session`, `triggerTables` and `isClosed` are only touched by the thread that holds
    // `lock` (recorded in `owner`, which is atomic so that a nested write is detected without taking the lock).
    private let lock = NSLock()
    private let owner = Atomic<UInt>(0)
    private var connection: Connection
    private let session: WriteSession
    private let observers: ObserverCenter
    /// Tables whose observer triggers changed inside the current transaction.
    private var triggerTables: Set<String> = []
    /// Set by ``close()``: every later write fails with `.closed`.
    private var isClosed = false
    /// The `synchronous` level the connection was opened with, put back after a write that asked for another.
    private let synchronous: GQLDatabase.Configuration.Synchronous

    init(
        path: String, configuration: GQLDatabase.Configuration, observers: ObserverCenter, cipher: CipherKey? = nil
    ) throws {
        synchronous = configuration.synchronous
        let session = WriteSession(observers: observers)
        connection = try Connection(
            path: path, reader: false, configuration: configuration, session: session, cipher: cipher)
        self.session = session
        self.observers = observers
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
    /// - Parameters:
    ///   - transaction: wrap `body` in `BEGIN IMMEDIATE` … `COMMIT` (rolled back when it throws). Without it
    ///     each statement commits on its own.
    ///   - origin: the tag observers receive with the write's changes.
    ///   - synchronous: the level this write commits with, when not the configured one. SQLite refuses to switch
    ///     it inside a transaction, so it is switched before `BEGIN` and put back after the end, lock held.
    func write<T>(
        transaction: Bool, origin: String? = nil, synchronous: GQLDatabase.Configuration.Synchronous? = nil,
        _ body: (Connection) throws -> T
    ) throws -> T {
        try refuseNesting()
        lock.lock()
        return try holding(transaction: transaction, origin: origin, synchronous: synchronous, body)
    }

    /// ``write(transaction:origin:synchronous:_:)`` when no other thread writes now; `nil`, with nothing run,
    /// when one does. For a caller that has better things to do than wait (an event loop).
    func writeIfFree<T>(transaction: Bool, origin: String? = nil, _ body: (Connection) throws -> T) throws -> T? {
        try refuseNesting()
        guard lock.try() else { return nil }
        return try holding(transaction: transaction, origin: origin, synchronous: nil, body)
    }

    private func refuseNesting() throws {
        if owner.load(ordering: .acquiring) == Self.currentThread {
            throw GQLError(
                .nestedWrite,
                "a write was started inside another write on the same database; use the transaction (tx) you were given"
            )
        }
    }

    /// The write itself, `lock` taken by the caller; releases it.
    private func holding<T>(
        transaction: Bool, origin: String?, synchronous: GQLDatabase.Configuration.Synchronous?,
        _ body: (Connection) throws -> T
    ) throws -> T {
        owner.store(Self.currentThread, ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            lock.unlock()
        }
        guard !isClosed else { throw GQLError(.closed, "the database was closed", operation: "write") }
        session.begin(origin: origin)
        defer { session.end() }
        guard let synchronous, synchronous != self.synchronous else {
            return try withHeld(transaction: transaction, body)
        }
        try connection.cached("PRAGMA synchronous = \(synchronous.rawValue)").runOnce()
        defer { try? connection.cached("PRAGMA synchronous = \(self.synchronous.rawValue)").runOnce() }
        return try withHeld(transaction: transaction, body)
    }

    /// Like ``write(transaction:origin:_:)``, but reentrant: runs inline when the calling thread already writes.
    func writeReentrant<T>(_ body: (Connection) throws -> T) throws -> T {
        if isHeldByCurrentThread { return try body(connection) }
        return try write(transaction: false, body)
    }

    /// Runs `body` (an UPDATE on the writer, lock held) with `values` readable by `gql_update_value(i)`.
    func withUpdateValues<T>(_ values: [GQLValue], _ body: () throws -> T) rethrows -> T {
        try session.withUpdateValues(values, body)
    }

    /// Notes that observer triggers of `table` changed inside the current write (lock held).
    func triggersChanged(_ table: String) {
        if !connection.isAutocommit { triggerTables.insert(table) }
    }

    /// Replaces the connection, lock held: `prepare` runs on the current one (nothing changes when it throws), then
    /// the connection closes, `swap` changes the file (an error from it still reopens), and `open` makes the new
    /// connection with this writer's session; the observers' triggers are installed on it again. When `open`
    /// fails the writer is closed.
    func rebuild(
        prepare: (Connection) throws -> Void, swap: () throws -> Void, open: (WriteSession) throws -> Connection
    ) throws {
        try write(transaction: false) { connection in
            try prepare(connection)
            connection.close()
            var swapError: (any Error)?
            do { try swap() } catch { swapError = error }
            do {
                self.connection = try open(session)
            } catch {
                isClosed = true
                throw error
            }
            for table in observers.tables().sorted() {
                try observers.reinstall(table: table, connection: self.connection)
            }
            if let swapError { throw swapError }
        }
    }

    /// Waits for the write in progress, then closes the connection; later writes fail with `.closed`.
    func close() throws {
        if isHeldByCurrentThread {
            throw GQLError(
                .nestedWrite, "the database cannot be closed from inside one of its own writes", operation: "close")
        }
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { return }
        isClosed = true
        connection.close()
    }

    private func withHeld<T>(transaction: Bool, _ body: (Connection) throws -> T) throws -> T {
        guard transaction else { return try body(connection) }
        try connection.cached("BEGIN IMMEDIATE").runOnce()
        triggerTables.removeAll()
        do {
            session.setRequiresTransaction(true)
            let result = try body(connection)
            session.setRequiresTransaction(false)
            try connection.cached("COMMIT").runOnce()  // its completion hands the events on
            return result
        } catch {
            session.setRequiresTransaction(false)
            if !connection.isAutocommit { try? connection.cached("ROLLBACK").runOnce() }
            session.end()
            if !triggerTables.isEmpty {
                // Observers added or removed inside the write lost their trigger changes with it.
                let tables = triggerTables
                triggerTables.removeAll()
                for table in tables.sorted() { try? observers.reinstall(table: table, connection: connection) }
            }
            throw error
        }
    }
}

extension Statement {
    /// Steps a statement that returns no rows, then resets it.
    func runOnce() throws {
        defer { reset() }
        while try step() {}
    }
}
