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
    var committed: (([ObserverEvent]) -> Void)?
    private var pendingMark = 0

    init(connection: Connection) {
        self.connection = connection
        connection.statementStarted = { [unowned self] in pendingMark = pending.count }
        connection.statementFailed = { [unowned self] in
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
    }

    deinit {
        sqlite3_rollback_hook(connection.handle, nil, nil)
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
    func write<T>(transaction: Bool, _ body: (Connection) throws -> T) throws -> T {
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
        return try withHeld(transaction: transaction, body)
    }

    /// Like ``write(transaction:_:)``, but reentrant: runs inline when the calling thread already writes.
    func writeReentrant<T>(_ body: (Connection) throws -> T) throws -> T {
        if isHeldByCurrentThread { return try body(connection) }
        return try write(transaction: false, body)
    }

    private func withHeld<T>(transaction: Bool, _ body: (Connection) throws -> T) throws -> T {
        if transaction {
            try connection.cached("BEGIN IMMEDIATE").runOnce()
            let result: T
            do {
                result = try body(connection)
                try connection.cached("COMMIT").runOnce()
            } catch {
                if !connection.isAutocommit { try? connection.cached("ROLLBACK").runOnce() }
                pending.removeAll()
                throw error
            }
            flush()
            return result
        }
        let result = try body(connection)
        if connection.isAutocommit { flush() }
        return result
    }

    private func flush() {
        pendingMark = 0
        guard !pending.isEmpty else { return }
        let events = pending
        pending.removeAll(keepingCapacity: true)
        committed?(events)
    }
}

extension Statement {
    /// Steps a statement that returns no rows, then resets it.
    func runOnce() throws {
        defer { reset() }
        while try step() {}
    }
}
